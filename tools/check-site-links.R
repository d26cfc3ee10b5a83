# Checks every internal link of the built site (site/, from tools/build-site.R):
# each relative href or src of every HTML file must name a file that exists,
# and a #fragment must name an id (or anchor name) in its target page.
# Links with a scheme (https:, mailto:, ...) are external and not followed.
#   Rscript tools/check-site-links.R [site]
# Prints one line "site links: N internal links in M pages, all resolve" or
# the broken ones and "site links: FAILED ..."; exit status 1 on a broken link.
args <- commandArgs(trailingOnly = TRUE)
site <- normalizePath(if (length(args)) args[1] else "site", mustWork = FALSE)
if (!dir.exists(site)) {
  cat("site links: FAILED, no site at", site, "(make site builds it)\n")
  quit(status = 1)
}
pages <- list.files(site, pattern = "[.]html$", recursive = TRUE, full.names = TRUE)
ids_cache <- new.env()
page_ids <- function(path) {
  key <- normalizePath(path)
  if (is.null(ids_cache[[key]])) {
    doc <- xml2::read_html(path)
    ids_cache[[key]] <- c(xml2::xml_attr(xml2::xml_find_all(doc, "//*[@id]"), "id"),
                          xml2::xml_attr(xml2::xml_find_all(doc, "//a[@name]"), "name"))
  }
  ids_cache[[key]]
}
broken <- character()
n <- 0L
for (page in pages) {
  doc <- xml2::read_html(page)
  nodes <- xml2::xml_find_all(doc, "//*[@href or @src]")
  links <- c(xml2::xml_attr(nodes, "href"), xml2::xml_attr(nodes, "src"))
  links <- links[!is.na(links) & nzchar(links)]
  # External: a scheme (https:, mailto:, data:, javascript:) or protocol-relative.
  links <- unique(links[!grepl("^([A-Za-z][A-Za-z0-9+.-]*:|//)", links)])
  for (link in links) {
    n <- n + 1L
    link <- sub("[?].*$", "", link)
    path <- utils::URLdecode(sub("#.*$", "", link))
    fragment <- if (grepl("#", link, fixed = TRUE)) sub("^[^#]*#", "", link) else ""
    target <- if (nzchar(path)) file.path(dirname(page), path) else page
    if (dir.exists(target)) target <- file.path(target, "index.html")
    rel <- substring(page, nchar(site) + 2L)
    if (!file.exists(target)) {
      broken <- c(broken, paste0(rel, ": ", link, " (no such file)"))
    } else if (nzchar(fragment) && grepl("[.]html$", target) &&
               !utils::URLdecode(fragment) %in% page_ids(target)) {
      broken <- c(broken, paste0(rel, ": ", link, " (no such anchor)"))
    }
  }
}
if (length(broken)) {
  cat(paste0("  broken: ", broken), sep = "\n")
  cat(sprintf("site links: FAILED, %d of %d internal links in %d pages do not resolve\n",
              length(broken), n, length(pages)))
  quit(status = 1)
}
cat(sprintf("site links: %d internal links in %d pages, all resolve\n", n, length(pages)))
