# Extracts Jane Austen's six novels from Debian's r-cran-janeaustenr as plain UTF-8 text.
# Run once (needs R: apt-get install r-cran-janeaustenr); the output is committed, so
# neither CI nor users need R.   Usage: Rscript scripts/extract_austen.R data/austen
args <- commandArgs(trailingOnly = TRUE)
out_dir <- if (length(args) >= 1) args[1] else "data/austen"
library(janeaustenr)
books <- list(
  sense_and_sensibility = sensesensibility,
  pride_and_prejudice   = prideprejudice,
  mansfield_park        = mansfieldpark,
  emma                  = emma,
  northanger_abbey      = northangerabbey,
  persuasion            = persuasion
)
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
for (name in names(books)) {
  lines <- enc2utf8(books[[name]])
  path <- file.path(out_dir, paste0(name, ".txt"))
  con <- file(path, open = "wb")
  writeLines(lines, con, sep = "\n", useBytes = TRUE)
  close(con)
  cat(sprintf("%-24s %8d lines %9d bytes\n", name, length(lines), file.size(path)))
}
