#!/usr/bin/env bash
# Takes the docs screenshot docs/images/kcachegrind-gauss.png: profiles the gauss
# example with `mri profile -o`, opens the callgrind file in KCachegrind on a
# headless Xvfb display and captures the screen. Needs an existing build
# (BUILD_DIR, default build); installs kcachegrind, xvfb, xdotool, x11-utils and
# imagemagick (and graphviz for the call graph) if missing. Not part of the build or test commands.
set -euo pipefail

cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
OUT=${OUT:-docs/images/kcachegrind-gauss.png}
mri="$BUILD_DIR/tools/mri/mri"
gauss="$BUILD_DIR/examples/gauss/gauss"
for f in "$mri" "$gauss"; do
  [ -x "$f" ] || { echo "kcachegrind-screenshot: $f not found; build first" >&2; exit 1; }
done

# graphviz: dot, for the call graph
scripts/install-deps.sh kcachegrind graphviz xvfb xdotool x11-utils imagemagick

tmp=$(mktemp -d)
xvfb_pid=""
kcg_pid=""
bus_pid=""
cleanup() {
  [ -n "$kcg_pid" ] && kill "$kcg_pid" 2>/dev/null || true
  [ -n "$bus_pid" ] && kill "$bus_pid" 2>/dev/null || true
  [ -n "$xvfb_pid" ] && kill "$xvfb_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

profile="$tmp/callgrind.out.gauss"
"$mri" profile -o "$profile" -- "$gauss"

# A free display number: the first with neither a lock file nor a socket.
disp=99
while [ -e "/tmp/.X$disp-lock" ] || [ -e "/tmp/.X11-unix/X$disp" ]; do disp=$((disp + 1)); done
Xvfb ":$disp" -screen 0 1280x800x24 -nolisten tcp >"$tmp/xvfb.log" 2>&1 &
xvfb_pid=$!
export DISPLAY=":$disp"
for _ in $(seq 50); do xdpyinfo >/dev/null 2>&1 && break; sleep 0.1; done
xdpyinfo >/dev/null 2>&1 || { echo "kcachegrind-screenshot: Xvfb did not start" >&2; cat "$tmp/xvfb.log" >&2; exit 1; }

# A fresh HOME so no user configuration or first-start state leaks in.
export HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/home/.config" XDG_RUNTIME_DIR="$tmp/run"
mkdir -p "$XDG_CONFIG_HOME" "$XDG_RUNTIME_DIR"
chmod 700 "$XDG_RUNTIME_DIR"
export QT_QPA_PLATFORM=xcb
# No "Tip of the Day" dialog on the first start.
printf '[TipOfDay]\nRunOnStart=false\n' >"$XDG_CONFIG_HOME/kcachegrindrc"
# KCachegrind quits without a D-Bus session bus; give it a private one.
dbus-daemon --session --nofork --address="unix:path=$tmp/bus" >"$tmp/dbus.log" 2>&1 &
bus_pid=$!
export DBUS_SESSION_BUS_ADDRESS="unix:path=$tmp/bus"
for _ in $(seq 50); do [ -S "$tmp/bus" ] && break; sleep 0.1; done

kcachegrind "$profile" >"$tmp/kcachegrind.log" 2>&1 &
kcg_pid=$!

win=""
for _ in $(seq 100); do
  win=$(xdotool search --onlyvisible --name 'callgrind\.out\.gauss' 2>/dev/null | head -n1 || true)
  [ -n "$win" ] && break
  sleep 0.2
done
[ -n "$win" ] || { echo "kcachegrind-screenshot: no KCachegrind window" >&2; cat "$tmp/kcachegrind.log" >&2; exit 1; }

# Fill the screen, give it time to load and lay out the views.
xdotool windowmove "$win" 0 0 windowsize "$win" 1280 800 || true
sleep 3
xdotool windowactivate --sync "$win" 2>/dev/null || xdotool windowfocus "$win" || true

# main is selected on start. Show its Callee Map on top and its Call Graph below:
# click the two tabs (positions in the 1280x800 window with the default layout;
# a miss only leaves the default Callers/Callees tabs showing).
xdotool mousemove --window "$win" 615 99 click 1 || true
sleep 1
xdotool mousemove --window "$win" 521 756 click 1 || true
sleep 1
# Drag the splitter between the two panes up so more of the call graph shows.
xdotool mousemove --window "$win" 809 428 mousedown 1 mousemove --window "$win" 809 300 \
  sleep 0.3 mouseup 1 || true
sleep 3
xdotool mousemove 1279 799 || true   # the pointer out of the way (no tooltips)
sleep 1

mkdir -p "$(dirname "$OUT")"
import -window root "$tmp/shot.png"
convert "$tmp/shot.png" -strip -define png:compression-level=9 "$OUT"
echo "kcachegrind-screenshot: wrote $OUT ($(stat -c %s "$OUT") bytes)"
