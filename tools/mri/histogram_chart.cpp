// The bins of `mri hist` as text and as an SVG chart (histogram_chart.h).
#include "histogram_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <utility>

namespace mri::cli {

namespace {

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// A step of 1, 2 or 5 times a power of ten that cuts [0, top] into about
// five intervals.
double nice_step(double top) {
  if (top <= 0) return 1;
  const double raw = top / 5, p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= raw) return m * p;
  return 10 * p;
}

}  // namespace

std::string hex(unsigned long long v) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%llx", v);
  return text;
}

std::string bin_names(const MRI_Histogram_Bin& b, const char* separator) {
  std::string out;
  for (int k = 0; k < b.data_structures.nr_Elements; ++k)
    out += (k ? separator : "") + std::string(b.data_structures.data_structure[k].name);
  return out;
}

std::string svg_chart(const MRI_Histogram_Request_Results& h, const std::string& title, const std::string& metric,
                      const std::string& xlabel) {
  const double W = 900, H = 500, left = 90, right = 30, top = 60, bottom = 130;
  const double pw = W - left - right, ph = H - top - bottom;
  unsigned long long maxv = 0;
  for (int b = 0; b < h.nr_Elements; ++b) maxv = std::max(maxv, h.element[b].value);
  const double step = nice_step(double(maxv));
  const double ytop = std::max(step, std::ceil(double(maxv) / step) * step);
  const int n = std::max(h.nr_Elements, 1);
  const double bw = pw / n;
  std::string o;
  // Each element formatted at its full length: names from the program may
  // be 255 bytes, five times that once escaped.
  auto add = [&](const char* fmt, auto... args) {
    const int n = std::snprintf(nullptr, 0, fmt, args...);
    if (n <= 0) return;
    const size_t at = o.size();
    o.resize(at + size_t(n) + 1);
    std::snprintf(o.data() + at, size_t(n) + 1, fmt, args...);
    o.resize(at + size_t(n));
  };
  add("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n", W, H, W, H);
  add("<rect width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n", W, H);
  add("<text x=\"%.1f\" y=\"28\" text-anchor=\"middle\" font-size=\"16\">%s</text>\n", W / 2, xml_escape(title).c_str());
  for (double v = 0; v <= ytop + step / 2; v += step) {  // value axis
    const double y = top + ph - v / ytop * ph;
    add("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#dddddd\"/>\n", left, y, left + pw, y);
    add("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.0f</text>\n", left - 6, y + 4, v);
  }
  for (int b = 0; b < h.nr_Elements; ++b) {
    const double bh = double(h.element[b].value) / ytop * ph, x = left + b * bw;
    add("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#4a78b5\" stroke=\"white\" stroke-width=\"0.5\">"
        "<title>bin %d [%s, %s): %llu (%s)</title></rect>\n", x, top + ph - bh, bw, bh, b,
        hex(h.element[b].address_begin).c_str(), hex(h.element[b].address_end).c_str(), h.element[b].value,
        xml_escape(bin_names(h.element[b], ", ")).c_str());
    const int every = n <= 30 ? 1 : (n + 29) / 30;  // at most ~30 bin numbers
    if (b % every == 0)
      add("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%d</text>\n", x + bw / 2, top + ph + 16, b);
  }
  add("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", left, top + ph, left + pw, top + ph);
  add("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", left, top, left, top + ph);
  // Data structures: consecutive bins that list the same name share a bracket.
  std::map<std::string, std::pair<int, int>> span;  // name -> first, last bin
  for (int b = 0; b < h.nr_Elements; ++b)
    for (int k = 0; k < h.element[b].data_structures.nr_Elements; ++k) {
      const std::string name = h.element[b].data_structures.data_structure[k].name;
      auto it = span.find(name);
      if (it == span.end()) span[name] = {b, b};
      else it->second.second = b;
    }
  int row = 0;
  for (const auto& [name, r] : span) {
    const double x1 = left + r.first * bw + 2, x2 = left + (r.second + 1) * bw - 2;
    const double y = top + ph + 34 + 18 * (row++ % 3);
    add("<path d=\"M%.1f %.1f V%.1f H%.1f V%.1f\" fill=\"none\" stroke=\"#444444\"/>\n", x1, y - 6, y, x2, y - 6);
    add("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", (x1 + x2) / 2, y + 13, xml_escape(name).c_str());
  }
  add("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", left + pw / 2, H - 18, xml_escape(xlabel).c_str());
  add("<text x=\"20\" y=\"%.1f\" text-anchor=\"middle\" transform=\"rotate(-90 20 %.1f)\">%s</text>\n", top + ph / 2,
      top + ph / 2, xml_escape(metric).c_str());
  o += "</svg>\n";
  return o;
}

}  // namespace mri::cli
