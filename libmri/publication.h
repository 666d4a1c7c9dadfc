// publication.h - the publication interface (paper section 6): what can be
// measured and how, the active objects, and the application's static
// information (regions, files, the overhead calibration). The functions
// run after the C entry point's session checks, with Session::mu held,
// unless they take no session.
#pragma once

#include "mri.h"
#include "session.h"

namespace mri::tool {

// Names of the C enums ("?" for a value outside them). Thread-safe.
const char* runtime_information_name(MRI_Runtime_Information_Spec ri);
const char* aggregation_operation_name(MRI_Aggregation_Operation op);
const char* region_type_name(MRI_Region_Type type);
// MRI_Runtime_Information_By_Name after its argument checks. Thread-safe.
int runtime_information_by_name(const char* name, MRI_Runtime_Information_Spec* ri);

int runtime_information_table(Session& s, MRI_Runtime_Information_Table* table);
int aggregation_table(Session& s, MRI_Runtime_Information_Spec ri, MRI_Aggregation_Table* table);
int active_object_table(Session& s, MRI_Active_Object_Table* table);
int active_object_info(Session& s, const MRI_Active_Object_Spec* ao, MRI_Active_Object_Info* info);
int region_table(Session& s, MRI_Region_Table* table);
int region_info(Session& s, const MRI_Region_Spec* region, MRI_Region_Info* info);
int find_region(Session& s, const char* name, MRI_Region_Spec* region);
int overhead_calibration(Session& s, MRI_Overhead_Calibration* calibration);
// The name of source file `file_ID`, or nullptr with the error set.
const char* file_name(Session& s, int file_ID);

}  // namespace mri::tool
