// The package's compiled side: the R functions' entry points and the runtime
// every package built against the headers shares. One translation unit (the
// parts are headers in this directory) because the library's templates are
// then compiled once: this is what every install of RcppSpool compiles.
#include "r_values.h"

#include "cores_entries.h"
#include "kendall_entries.h"
#include "rcppthread_entries.h"
#include "runtime_owner.h"
#include "output_cells.h"
#include "timeline_entries.h"

#include <R_ext/Rdynload.h>
#include <R_ext/Visibility.h>

namespace {

// The output matrix of issue 36 (src/output_cells.h), as RcppSpool's own code
// runs it: the runtime called directly, not through its table.
SEXP outputCells(SEXP services, SEXP kind, SEXP label, SEXP writers, SEXP lines)
{
    return native::callFromR([&] { return output_cells::runCellsR(services, kind, label, writers, lines); });
}

#define RCPPSPOOL_ENTRY(name, args) {"_RcppSpool_" #name, reinterpret_cast<DL_FUNC>(&name), args}
// The names R/native.R calls with .Call().
const R_CallMethodDef callEntries[] = {
    RCPPSPOOL_ENTRY(testGlobal, 0),
    RCPPSPOOL_ENTRY(cpp_available_cores, 0),
    RCPPSPOOL_ENTRY(cpp_default_threads, 0),
    RCPPSPOOL_ENTRY(cpp_check_threads, 1),
    RCPPSPOOL_ENTRY(cpp_default_threads_api, 0),
    RCPPSPOOL_ENTRY(cpp_available_cores_api, 0),
    RCPPSPOOL_ENTRY(cpp_is_forked_child, 0),
    RCPPSPOOL_ENTRY(spoolKendall, 3),
    RCPPSPOOL_ENTRY(runtimeInfo, 0),
    RCPPSPOOL_ENTRY(globalPoolState, 0),
    RCPPSPOOL_ENTRY(outputCells, 5),
    RCPPSPOOL_ENTRY(timelineStart, 1),
    RCPPSPOOL_ENTRY(timelineRunning, 0),
    RCPPSPOOL_ENTRY(timelineStop, 0),
    RCPPSPOOL_ENTRY(timelineWrite, 4),
    {nullptr, nullptr, 0}};
#undef RCPPSPOOL_ENTRY

}  // namespace

extern "C" attribute_visible void R_init_RcppSpool(DllInfo* dll)
{
    R_registerRoutines(dll, nullptr, callEntries, nullptr, nullptr);
    R_useDynamicSymbols(dll, FALSE);
    registerRuntime();
}
