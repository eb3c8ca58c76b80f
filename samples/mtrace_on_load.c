#include <mcheck.h>
__attribute__((constructor)) static void start_trace(void) { mtrace(); }
