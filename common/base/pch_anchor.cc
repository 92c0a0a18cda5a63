// The source that compiles a shared precompiled header (fedmf_pch in
// common/base/CMakeLists.txt, fedmf_test_pch in tests/CMakeLists.txt); it has
// no code of its own.
