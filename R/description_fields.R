# DESCRIPTION's fields, edited in place, for use_rcppspool() (R/migrate.R).

# The value of `field` (what follows "Field:", continuation lines joined with
# "\n"), or NULL.
desc_get <- function(lines, field) {
  at <- desc_field_lines(lines, field)
  if (!length(at)) return(NULL)
  paste(c(substring(lines[at[1]], nchar(field, type = "bytes") + 2L), lines[at[-1]]), collapse = "\n")
}

# Sets `field` to `value` (NULL removes it). A new field goes after Depends
# (Imports) or LinkingTo (the others), else at the end.
desc_set <- function(lines, field, value) {
  at <- desc_field_lines(lines, field)
  new <- if (!is.null(value)) strsplit(paste0(field, ":", value), "\n", fixed = TRUE)[[1]]
  if (length(at)) {
    if (identical(desc_get(lines, field), value)) return(lines)
    return(append(lines[-at], new, after = at[1] - 1L))
  }
  if (is.null(value)) return(lines)
  near <- desc_field_lines(lines, if (field == "Imports") "Depends" else "LinkingTo")
  if (!length(near) && field == "Imports") {
    before <- desc_field_lines(lines, "LinkingTo")
    if (length(before)) return(append(lines, new, after = before[1] - 1L))
  }
  append(lines, new, after = if (length(near)) max(near) else length(lines))
}

desc_field_lines <- function(lines, field) {
  start <- !grepl("^[[:space:]]", lines, useBytes = TRUE)  # a blank line too: it belongs to no field
  id <- cumsum(start)
  name <- sub(":.*$", "", lines, useBytes = TRUE)
  hit <- which(start & nzchar(lines) & name == field)
  if (!length(hit)) return(integer())
  which(id == id[hit[1]])
}

# A dependency field's entries: the text of each (between commas, spaces
# included), named by its package.
dep_entries <- function(value) {
  if (is.null(value) || is.na(value) || !nzchar(trimws(value))) return(character())
  parts <- strsplit(value, ",", fixed = TRUE)[[1]]
  stats::setNames(parts, sub("^[[:space:]]*([A-Za-z0-9.]*).*$", "\\1", parts, useBytes = TRUE))
}

dep_join <- function(parts, value) {
  if (!length(parts)) return(NULL)
  # The first entry keeps the field's first spacing (" " or "\n    ").
  lead <- regmatches(value, regexpr("^[[:space:]]*", value, useBytes = TRUE))
  parts[1] <- paste0(lead, sub("^[[:space:]]*", "", parts[1], useBytes = TRUE))
  paste0(paste(parts, collapse = ","), if (grepl(",[[:space:]]*$", value, useBytes = TRUE)) ",")
}

# `old` (with its version requirement, which is RcppThread's or
# RcppParallel's) becomes `new`, once.
dep_rename <- function(value, old, new) {
  parts <- dep_entries(value)
  if (!old %in% names(parts)) return(value)
  i <- names(parts) == old
  parts[i] <- paste0(regmatches(parts[i], regexpr("^[[:space:]]*", parts[i], useBytes = TRUE)), new,
                     regmatches(parts[i], regexpr("[[:space:]]*$", parts[i], useBytes = TRUE)))
  names(parts)[i] <- new
  dep_join(parts[!(names(parts) == new & duplicated(names(parts)))], value)
}

dep_remove <- function(value, name) {
  parts <- dep_entries(value)
  if (!name %in% names(parts)) return(value)
  dep_join(parts[names(parts) != name], value)
}

# Adds `name` at the end, spaced as the last entry is (on a line of its own,
# or after ", " or ",").
dep_add <- function(value, name) {
  parts <- dep_entries(value)
  if (name %in% names(parts)) return(value)
  if (!length(parts)) return(paste0(" ", name))
  last <- parts[length(parts)]
  lead <- regmatches(last, regexpr("^[[:space:]]*", last, useBytes = TRUE))
  if (!grepl("\n", lead, fixed = TRUE) && (nzchar(lead) || length(parts) == 1L)) lead <- " "
  paste0(sub(",?[[:space:]]*$", "", value, useBytes = TRUE), ",", lead, name)
}

# `name`'s entry requires version `version` or later: "name (>= version)". A
# requirement of a later version is kept; any other (an earlier version, or
# none) is replaced. Spacing around the entry is kept.
dep_require <- function(value, name, version) {
  parts <- dep_entries(value)
  if (!name %in% names(parts)) return(value)
  i <- which(names(parts) == name)[1]
  has <- regmatches(parts[i], regexec("\\(\\s*>=\\s*([0-9][0-9.-]*)\\s*\\)", parts[i], useBytes = TRUE))[[1]]
  if (length(has) == 2L && package_version(has[2], strict = FALSE) >= package_version(version)) return(value)
  lead <- regmatches(parts[i], regexpr("^[[:space:]]*", parts[i], useBytes = TRUE))
  trail <- regmatches(parts[i], regexpr("[[:space:]]*$", parts[i], useBytes = TRUE))
  parts[i] <- paste0(lead, name, " (>= ", version, ")", trail)
  dep_join(parts, value)
}
