# Checks every internal link of the built site (site/, from tools/build-site.R):
# each relative href or src of every HTML file must name a file that exists,
# and a #fragment must name an id (or anchor name) in its target page.
# Links with a scheme (https:, mailto:, ...) are external and not followed;
# but a page must not load a script, style sheet, image or frame from one
# (https:, file:, ...): the site works offline.
#   Rscript tools/check-site-links.R [site]
# Prints one line "site links: N internal links in M pages, all resolve, no
# resource loaded from elsewhere" or
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
  # Resources the page loads (not links a reader follows) must be the site's.
  loads <- xml2::xml_find_all(doc, "//script[@src] | //img[@src] | //iframe[@src] | //link[@href and not(@rel='canonical') and not(@rel='alternate')]")
  urls <- c(xml2::xml_attr(loads, "src"), xml2::xml_attr(loads, "href"))
  urls <- urls[!is.na(urls) & grepl("^([A-Za-z][A-Za-z0-9+.-]*:|//)", urls) & !startsWith(urls, "data:")]
  for (u in unique(urls)) {
    broken <- c(broken, paste0(substring(page, nchar(site) + 2L), ": loads ", u, " (not offline)"))
  }
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
  cat(sprintf("site links: FAILED, %d problems (broken links, resources from elsewhere) in %d pages (%d internal links)\n",
              length(broken), length(pages), n))
  quit(status = 1)
}
cat(sprintf("site links: %d internal links in %d pages, all resolve; nothing loaded from elsewhere\n", n, length(pages)))
