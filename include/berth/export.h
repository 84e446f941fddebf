// BERTH_EXPORT marks what the plugin SDK exports from the berth binary. Berth is built with
// hidden visibility by default (-fvisibility=hidden -fvisibility-inlines-hidden), so only the
// types and functions declared in include/berth/ with this mark are in the binary's dynamic
// symbol table, where plugin libraries loaded with --plugin-library resolve them. A class
// marked exports its out-of-line members, its vtable and its type_info (which dynamic_cast
// and exceptions compare across the binary and the library); inline members stay local to each
// side. docs/plugin-authoring.md ("ABI contract") lists the rules.
#pragma once

#if defined(__GNUC__) || defined(__clang__)
#define BERTH_EXPORT __attribute__((visibility("default")))
#else
#define BERTH_EXPORT
#endif
