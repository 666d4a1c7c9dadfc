// The VTF3 ASCII records we write and read (internal; syntax in
// docs/formats.md, "VTF3").
#pragma once

namespace mri::exporters::detail::vtf3 {

// Definition records: the record name first.
inline constexpr char kDefCreator[] = "DEFCREATOR";      // "<creator>"
inline constexpr char kDefClkPeriod[] = "DEFCLKPERIOD";  // <seconds per tick>
inline constexpr char kDefSysCpuNums[] = "DEFSYSCPUNUMS";  // <systems> <cpus of system 0> ...
inline constexpr char kDefCpuName[] = "DEFCPUNAME";      // <cpu> "<name>"
inline constexpr char kDefSclFile[] = "DEFSCLFILE";      // <file> "<path>"
inline constexpr char kDefScl[] = "DEFSCL";              // <scl> <n> (<file> <line>){n}
inline constexpr char kDefAct[] = "DEFACT";              // <activity> "<name>"
inline constexpr char kDefState[] = "DEFSTATE";          // <activity> <state> "<name>" <scl>
inline constexpr char kDefSampClass[] = "DEFSAMPCLASS";  // <class> "<name>"
inline constexpr char kDefSamp[] = "DEFSAMP";            // <sample> <class> "<name>" "<unit>"

// Time-stamped records: the time (ticks) first, then the record name.
inline constexpr char kComment[] = "COMMENT";  // <time> COMMENT "<text>"
inline constexpr char kDownto[] = "DOWNTO";    // <time> DOWNTO <state> <cpu> <scl>
inline constexpr char kUpfrom[] = "UPFROM";    // <time> UPFROM <state> <cpu> <scl>
inline constexpr char kExchange[] = "EXCHANGE";  // <time> EXCHANGE <cpu> <left state> <entered state> <scl> (read only)
inline constexpr char kSamp[] = "SAMP";        // <time> SAMP <cpu> <n> (<sample> <value>){n}

// VTF3_SCLNONE: no source code location.
inline constexpr long kSclNone = -1;

// The first line of every file we write, so that a reader can tell our
// rendition (and its version) from other text.
inline constexpr char kFirstComment[] = "MRI trace, VTF3 ASCII records, rendition 1";
// MRI facts that VTF3 has no record for travel in comments at time 0.
inline constexpr char kProgramComment[] = "mri:program=";  // + program name
inline constexpr char kOsTidComment[] = "mri:os_tid ";     // + "<cpu>=<tid>"
inline constexpr char kSampleClassName[] = "MRI metrics";

}  // namespace mri::exporters::detail::vtf3
