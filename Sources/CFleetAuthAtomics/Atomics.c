// Every operation is an inline function in include/CFleetAuthAtomics.h; a C target needs
// one source file to build.
#include "CFleetAuthAtomics.h"
