// A static program that does nothing: the exec floor of scripts/bench.d/floor.
int main(void) { return 0; }
