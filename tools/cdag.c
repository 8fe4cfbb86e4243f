#include <stdio.h>
#include "cdag.h"
int main(void) { puts("cdag"); return 0; }
