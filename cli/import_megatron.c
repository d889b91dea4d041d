/* import_megatron.c - placeholder */
#include "import.h"
int plc_import_megatron(int argc, char **argv) { (void)argc; (void)argv; return 2; }
