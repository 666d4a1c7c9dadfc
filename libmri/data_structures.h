// data_structures.h - the data structures the application registered
// (paper 3.2): the table read from the segment and checked, and lookups.
// All need mu and an application loaded.
#pragma once

#include "mri.h"
#include "session.h"

namespace mri::tool {

// Reads what the application registered since the last call; MRI_OK, or
// MRI_Error when it published a bad record.
int refresh_data_structures(Session& s);
// The newest registration `spec` names: its index into s.data, or -1 with
// the error set.
int data_structure_index(Session& s, const MRI_Data_Structure_Spec& spec);
// MRI_Get_Data_Structures, MRI_Find_Data_Structure and
// MRI_Get_Data_Structure_Info after the session checks.
int data_structure_table(Session& s, MRI_Data_Structure_Table* table);
int find_data_structure(Session& s, const char* name, MRI_Data_Structure_Spec* data_structure);
int data_structure_info(Session& s, const MRI_Data_Structure_Spec& data_structure, MRI_Data_Structure_Info* info);

}  // namespace mri::tool
