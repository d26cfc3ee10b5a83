// R entry points of availableCores(), getThreads()/setThreads() and
// isForkedChild(). They call the same C++ as the headers (RcppSpool/cores.h),
// so that R and C++ agree by construction; errors and warnings go back to R,
// which raises them as ordinary conditions.
#include <Rcpp.h>

#include <RcppSpool/cores.h>

#if !defined(_WIN32)
#include <unistd.h>
#endif

namespace {

Rcpp::IntegerVector namedCounts(const std::vector<std::pair<std::string, int>>& counts)
{
    Rcpp::IntegerVector out(counts.size());
    Rcpp::CharacterVector names(counts.size());
    for (std::size_t i = 0; i < counts.size(); ++i) {
        out[i] = counts[i].second;
        names[i] = counts[i].first;
    }
    out.attr("names") = names;
    return out;
}

SEXP errorOrNull(const std::string& error)
{
    return error.empty() ? R_NilValue : Rcpp::wrap(error);
}

#if !defined(_WIN32)
// The process id when this package was loaded; another one later means we
// run in a child created by fork().
const pid_t pidAtLoad = getpid();
#endif

}  // namespace

// availableCores(): the minimum, every rule found, an error or NULL, and the
// warnings not given before.
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_available_cores()
{
    RcppSpool::engine::CoresResult r = RcppSpool::detail::coresNow();
    return Rcpp::List::create(Rcpp::Named("min") = namedCounts({{r.rule, r.count}}),
                              Rcpp::Named("all") = namedCounts(r.all),
                              Rcpp::Named("error") = errorOrNull(r.error),
                              Rcpp::Named("warnings") = RcppSpool::detail::newWarnings(r.warnings));
}

// getThreads(): the count, where it came from, an error or NULL, new warnings.
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_default_threads()
{
    RcppSpool::engine::ThreadsResult r = RcppSpool::detail::threadsNow();
    return Rcpp::List::create(Rcpp::Named("count") = static_cast<int>(r.count), Rcpp::Named("source") = r.source,
                              Rcpp::Named("error") = errorOrNull(r.error),
                              Rcpp::Named("warnings") = RcppSpool::detail::newWarnings(r.warnings));
}

// setThreads(n): n as an integer when it is allowed, else the error message.
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_check_threads(SEXP n)
{
    std::size_t count = 0;
    std::string error =
        RcppSpool::engine::checkThreadCount(RcppSpool::host::toOptionValue(n), "setThreads(n): n", count);
    return Rcpp::List::create(Rcpp::Named("value") = static_cast<int>(count),
                              Rcpp::Named("error") = errorOrNull(error));
}

// The C++ functions themselves, as another package calls them: errors are
// thrown as std::invalid_argument, which Rcpp turns into R errors.
// [[Rcpp::export(rng = false)]]
int cpp_default_threads_api()
{
    return static_cast<int>(RcppSpool::defaultThreads());
}

// [[Rcpp::export(rng = false)]]
int cpp_available_cores_api()
{
    return static_cast<int>(RcppSpool::availableCores());
}

// isForkedChild(): has this process been forked since the package loaded?
// [[Rcpp::export(rng = false)]]
bool cpp_is_forked_child()
{
#if defined(_WIN32)
    return false;
#else
    return getpid() != pidAtLoad;
#endif
}
