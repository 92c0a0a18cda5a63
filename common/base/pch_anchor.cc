// The source that compiles the shared precompiled header (fedmf_pch in
// common/base/CMakeLists.txt); it has no code of its own.
