// mri's own standard streams, and the signals its outputs can raise: a
// standard descriptor mri was started without, a reader of its standard
// output that goes away (SIGPIPE), a file-size limit (SIGXFSZ).
//
// The handlers are installed with sigaction() so that PROGRAM, started
// later with exec(), gets the default actions back, as without mri (an
// ignored signal would stay ignored across the exec).
//
// Thread safety: called from main()'s thread, once each, before and after
// the command runs.
#pragma once

namespace mri::cli {

// A standard descriptor that mri was started with closed (`mri ... >&-`)
// gets a placeholder (close-on-exec: the program starts with it closed, as
// it would without mri), so that mri's own descriptors do not take its
// number. Call first.
void hold_closed_standard_descriptors();

// A file-size limit (ulimit -f) fails the write that crosses it with EFBIG
// instead of killing mri: the output's error path runs.
void survive_file_size_limit();

// A reader of mri's standard output that goes away does not end mri in the
// middle of its work; end_of_output() then ends it by SIGPIPE.
void survive_broken_pipe();

// The end of a command (the program ended, files written, MRI_Finalize()
// done), with the command's exit status `code`: what could not be written
// to standard output. A reader that went away ends mri by SIGPIPE (status
// 141, quietly, as a standard tool does); any other error is reported, and
// the status is then 1 unless `code` says otherwise.
int end_of_output(int code);

}  // namespace mri::cli
