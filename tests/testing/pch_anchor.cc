// The source that compiles the tests' shared precompiled header (fedmf_test_pch
// in tests/CMakeLists.txt); it has no code of its own.
