#pragma once
/// \file compiled.hpp
/// gpuplace is header-only, and optionally compiled in part, as CLI11 is with CLI11_COMPILE: with
/// GPUPLACE_COMPILED defined (the CMake target gpuplace::compiled defines it for its users), cold
/// code (the trace readers, the JSON readers and writers) is declared in the headers and defined
/// once in the library (src/compiled/gpuplace.cpp, from the headers' impl/*_inl.hpp), and the
/// default env types are instantiated there (impl/extern_templates.hpp): a program then compiles
/// only its own code and the hot templates it instantiates itself. Without it, every definition
/// is inline in the headers, as before.

/// `inline` for a definition of impl/*_inl.hpp in the header-only library; nothing in the
/// compiled one, whose single translation unit defines it.
#ifdef GPUPLACE_COMPILED
#define GPUPLACE_INLINE
#else
#define GPUPLACE_INLINE inline
#endif
