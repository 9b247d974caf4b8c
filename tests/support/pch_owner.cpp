// The target that owns the precompiled header every test executable reuses (tests/CMakeLists.txt).
int main() { return 0; }
