#pragma once

// The C interface of the shotchain_sentencepiece plugin. Debian's libsentencepiece carries its
// own copy of protobuf-lite 3.14 and exports those symbols; libtorch exports its own protobuf
// too. Linked into one process they resolve to each other and the program aborts at start.
// So sentencepiece lives in a plugin that core loads with RTLD_LOCAL | RTLD_DEEPBIND: each
// library keeps its own protobuf. Only plain C types cross this boundary.

#define SHOTCHAIN_SPM_API __attribute__((visibility("default")))

#ifdef __cplusplus
extern "C" {
#endif

typedef struct shotchain_spm shotchain_spm;

// Returns nullptr on failure with the reason in `error` (NUL-terminated, truncated to capacity).
SHOTCHAIN_SPM_API shotchain_spm* shotchain_spm_open_file(const char* path, char* error, int capacity);
SHOTCHAIN_SPM_API shotchain_spm* shotchain_spm_open_bytes(const char* data, long size, char* error, int capacity);
SHOTCHAIN_SPM_API void shotchain_spm_close(shotchain_spm* model);

SHOTCHAIN_SPM_API int shotchain_spm_vocab_size(const shotchain_spm* model);
SHOTCHAIN_SPM_API int shotchain_spm_eos_id(const shotchain_spm* model);
SHOTCHAIN_SPM_API int shotchain_spm_pad_id(const shotchain_spm* model);
SHOTCHAIN_SPM_API int shotchain_spm_unk_id(const shotchain_spm* model);
// Writes up to `capacity` ids and returns how many the text needs (call again when larger).
SHOTCHAIN_SPM_API int shotchain_spm_encode(const shotchain_spm* model, const char* text, int* ids, int capacity);
// Writes up to `capacity` bytes (NUL-terminated) and returns the decoded length.
SHOTCHAIN_SPM_API int shotchain_spm_decode(const shotchain_spm* model, const int* ids, int count, char* text,
                                           int capacity);

#ifdef __cplusplus
}
#endif
