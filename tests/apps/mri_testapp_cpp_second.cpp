// Second translation unit including the header with the inline region.
#include "mri_testapp_inline.h"

int second_unit_calls_inline_helper() { return inline_helper(0); }
