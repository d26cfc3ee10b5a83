// The version of these headers: RcppSpool's package version (DESCRIPTION's
// Version, checked by a test to be the same).
//
// Versions follow semantic versioning, tied to the runtime's table
// (table/api_table.h) and the ABI version (abi.h): before 1.0.0 the minor
// version rises with new features and whenever the ABI version or the table
// version does (0.13.0: ABI 13, table 6); the patch version rises with fixes
// that change neither. A package built
// against headers of version x asks the runtime for version x or later: it
// names x in its DESCRIPTION (`LinkingTo` and `Imports: RcppSpool (>= x)`,
// as use_rcppspool() writes), and at run time the runtime's version (the
// C-callable "RcppSpool_version") must be at least x, or the first call
// fails with an error that names both versions.
#pragma once

//! The major version (0 until the API is declared stable).
#define RCPPSPOOL_VERSION_MAJOR 0
//! The minor version: rises with new features, and whenever the ABI version
//! (abi.h) or the runtime's table (table/api_table.h) does; 0.13 is ABI 13,
//! table version 6.
#define RCPPSPOOL_VERSION_MINOR 13
//! The patch version: fixes that change neither the ABI nor the table.
#define RCPPSPOOL_VERSION_PATCH 0
//! The version as text: "major.minor.patch".
#define RCPPSPOOL_VERSION_STRING "0.13.0"
//! The version as one number that orders as versions do:
//! major * 1,000,000 + minor * 1,000 + patch.
#define RCPPSPOOL_VERSION_NUMBER \
    (RCPPSPOOL_VERSION_MAJOR * 1000000 + RCPPSPOOL_VERSION_MINOR * 1000 + RCPPSPOOL_VERSION_PATCH)
