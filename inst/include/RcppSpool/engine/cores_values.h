// R values without R: an option's value, its readers, and R's conversions of text and numbers.
#pragma once

#include "../abi.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {

//! R's NA_integer_: "this rule does not apply / could not be read".
constexpr int naInt = std::numeric_limits<int>::min();

//! The value of an R option, copied out of R so that the engine needs no R
//! headers: NULL (unset) or an atomic vector. Numbers keep their R type
//! because the rules treat `TRUE`, `2L`, `2.5` and `"2"` differently.
struct OptionValue {
    //! The R type of the value; `other` is anything else (a function, a list...).
    enum class Type { null, logical, integer, real, string, other };

    Type type = Type::null;            //!< R type; `null` means the option is unset
    std::vector<double> numbers;       //!< elements of a logical/integer/real vector (NA: NaN)
    std::vector<std::string> strings;  //!< elements of a character vector
    std::vector<bool> stringIsNA;      //!< which elements of `strings` are NA_character_
    std::string otherType;             //!< R's name of the type when `type == other`

    //! Number of elements (0 for NULL, 1 for `other`).
    std::size_t length() const
    {
        switch (type) {
        case Type::null: return 0;
        case Type::string: return strings.size();
        case Type::other: return 1;
        default: return numbers.size();
        }
    }
    //! True when the option is unset.
    bool isNull() const { return type == Type::null; }
    //! True for integer and double vectors (R's is.numeric()).
    bool isNumeric() const { return type == Type::integer || type == Type::real; }

    //! An integer or double scalar.
    static OptionValue number(double x, bool isInteger = false)
    {
        OptionValue v;
        v.type = isInteger ? Type::integer : Type::real;
        v.numbers.push_back(x);
        return v;
    }
    //! A character vector without NAs.
    static OptionValue text(std::vector<std::string> xs)
    {
        OptionValue v;
        v.type = Type::string;
        v.stringIsNA.assign(xs.size(), false);
        v.strings = std::move(xs);
        return v;
    }
    //! A logical scalar (NaN for NA).
    static OptionValue logical(double x)
    {
        OptionValue v;
        v.type = Type::logical;
        v.numbers.push_back(x);
        return v;
    }

    //! The value written the way R would print it in a message: `2.5`, `NA`,
    //! `"a"`, `TRUE`, `c(1, 2)`, `NULL`, `<function>`.
    std::string describe() const;
};

//! Reads the R option `name` into `out`; returns false when it is unset
//! (NULL). In R this may only run on R's main thread.
using OptionReader = std::function<bool(const std::string& name, OptionValue& out)>;

//! Reads the environment variable `name` into `out`; returns false when it
//! is unset. An empty value counts as unset for every rule here.
using EnvReader = std::function<bool(const std::string& name, std::string& out)>;

//! An OptionReader for programs without R: no option is ever set.
inline bool noOptions(const std::string&, OptionValue&) { return false; }

//! The process environment, through getenv().
inline bool processEnv(const std::string& name, std::string& out)
{
    const char* v = std::getenv(name.c_str());
    if (!v) return false;
    out = v;
    return true;
}

namespace cores_detail {

//! Removes the characters R's parallelly trims ([\t\n\f\r ]) at both ends.
inline std::string trim(const std::string& s)
{
    auto isWs = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'; };
    std::size_t b = 0, e = s.size();
    while (b < e && isWs(s[b])) ++b;
    while (e > b && isWs(s[e - 1])) --e;
    return s.substr(b, e - b);
}

inline std::string toLower(std::string s)
{
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

inline std::string toUpper(std::string s)
{
    for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

inline std::vector<std::string> split(const std::string& s, char sep)
{
    std::vector<std::string> out;
    std::size_t start = 0;
    for (;;) {
        std::size_t pos = s.find(sep, start);
        out.push_back(s.substr(start, pos == std::string::npos ? std::string::npos : pos - start));
        if (pos == std::string::npos) break;
        start = pos + 1;
    }
    return out;
}

inline bool startsWith(const std::string& s, const std::string& prefix)
{
    return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

//! Formats a number as R prints it in messages (15 significant digits).
inline std::string formatNumber(double x)
{
    if (std::isnan(x)) return "NA";
    if (std::isinf(x)) return x > 0 ? "Inf" : "-Inf";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.15g", x);
    return buf;
}

//! Parses a number the way R's as.numeric() parses a string (R_strtod):
//! surrounding white space, a sign, decimal digits with an optional point and
//! exponent (an exponent without digits counts as 0, as in R), or hex digits
//! after 0x. "NA", "NaN" and "Inf" give a non-finite value. Written by hand
//! because strtod() follows the C locale's decimal mark, and R's does not.
//! Returns false when the text is not a number at all.
inline bool parseNumber(const std::string& text, double& out)
{
    std::string s = trim(text);
    std::size_t i = 0, n = s.size();
    double sign = 1;
    if (i < n && (s[i] == '+' || s[i] == '-')) sign = (s[i++] == '-') ? -1 : 1;
    std::string rest = s.substr(i);
    std::string lower = toLower(rest);
    if (rest == "NA" || lower == "nan") {
        out = std::numeric_limits<double>::quiet_NaN();
        return true;
    }
    if (lower == "inf" || lower == "infinity") {
        out = sign * std::numeric_limits<double>::infinity();
        return true;
    }
    if (n - i > 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
        double v = 0;
        for (i += 2; i < n; ++i) {
            char c = static_cast<char>(std::tolower(static_cast<unsigned char>(s[i])));
            int d = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
            if (d < 0) return false;
            v = v * 16 + d;
        }
        out = sign * v;
        return true;
    }
    double v = 0;
    int digits = 0, exp10 = 0;
    for (; i < n && std::isdigit(static_cast<unsigned char>(s[i])); ++i, ++digits) v = v * 10 + (s[i] - '0');
    if (i < n && s[i] == '.') {
        for (++i; i < n && std::isdigit(static_cast<unsigned char>(s[i])); ++i, ++digits) {
            v = v * 10 + (s[i] - '0');
            --exp10;
        }
    }
    if (digits == 0) return false;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        ++i;
        int esign = 1, e = 0;
        if (i < n && (s[i] == '+' || s[i] == '-')) esign = (s[i++] == '-') ? -1 : 1;
        for (; i < n && std::isdigit(static_cast<unsigned char>(s[i])); ++i) e = std::min(e * 10 + (s[i] - '0'), 100000);
        exp10 += esign * e;
    }
    if (i != n) return false;
    out = sign * v * std::pow(10.0, exp10);
    return true;
}

//! R's as.integer() of a double: NA when not finite or out of int range,
//! else truncated toward zero.
inline int doubleToInt(double x)
{
    if (!std::isfinite(x) || x >= 2147483648.0 || x <= -2147483648.0) return naInt;
    return static_cast<int>(x);
}

//! R's as.integer() of a string: "4.7" is 4, "0x10" 16, "abc" NA.
inline int stringToInt(const std::string& s)
{
    double x;
    if (!parseNumber(s, x)) return naInt;
    return doubleToInt(x);
}

//! R's as.logical() of a string: TRUE for "T", "TRUE", "true", "True";
//! FALSE for "F", "FALSE", "false", "False"; NA (returned as -1) otherwise.
inline int stringToLogical(const std::string& s)
{
    if (s == "T" || s == "TRUE" || s == "true" || s == "True") return 1;
    if (s == "F" || s == "FALSE" || s == "false" || s == "False") return 0;
    return -1;
}

//! R's as.integer() of the first element of an option value (naInt when
//! it is empty or cannot be converted).
inline int firstAsInt(const OptionValue& v)
{
    if (v.length() == 0) return naInt;
    switch (v.type) {
    case OptionValue::Type::logical:
    case OptionValue::Type::integer:
    case OptionValue::Type::real: return doubleToInt(v.numbers[0]);
    case OptionValue::Type::string: return v.stringIsNA[0] ? naInt : stringToInt(v.strings[0]);
    default: return naInt;
    }
}

}  // namespace cores_detail

inline std::string OptionValue::describe() const
{
    using cores_detail::formatNumber;
    if (type == Type::null) return "NULL";
    if (type == Type::other) return "<" + otherType + ">";
    std::size_t n = length();
    if (n == 0) {
        switch (type) {
        case Type::logical: return "logical(0)";
        case Type::integer: return "integer(0)";
        case Type::real: return "numeric(0)";
        default: return "character(0)";
        }
    }
    std::vector<std::string> parts;
    for (std::size_t i = 0; i < n && i < 5; ++i) {
        if (type == Type::string)
            parts.push_back(stringIsNA[i] ? "NA" : "\"" + strings[i] + "\"");
        else if (type == Type::logical)
            parts.push_back(std::isnan(numbers[i]) ? "NA" : numbers[i] != 0 ? "TRUE" : "FALSE");
        else
            parts.push_back(formatNumber(numbers[i]));
    }
    if (n > 5) parts.push_back("...");
    if (n == 1) return parts[0];
    std::string out = "c(";
    for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? ", " : "") + parts[i];
    return out + ")";
}

}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
