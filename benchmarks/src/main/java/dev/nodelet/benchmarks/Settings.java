package dev.nodelet.benchmarks;

import java.nio.file.Path;
import java.util.Optional;
import java.util.Set;

/**
 * What to run and how.
 *
 * @param smoke one short iteration of everything, for CI: proves the benchmarks run, measures nothing
 * @param measures the measures to run (1..13)
 * @param out the Markdown file whose results table is replaced
 * @param jsonDir where JMH writes its JSON results
 * @param profiler a JMH profiler for measures 1, 3 and 9 (e.g. {@code gc}, {@code jfr}, {@code stack}), if any
 */
record Settings(boolean smoke, Set<Integer> measures, Path out, Path jsonDir, Optional<String> profiler) {
}
