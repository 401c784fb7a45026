package dev.nodelet.benchmarks;

/**
 * One line of the results table.
 *
 * @param measure the measure's number in docs/benchmarks.md (1..7)
 * @param benchmark what was measured
 * @param nodelet Nodelet's figure, with units
 * @param baseline the baseline's figure, with units, or "—"
 * @param target the target
 * @param met whether the target is met: "yes", "no", or "—" for an informative line
 */
record Row(int measure, String benchmark, String nodelet, String baseline, String target, String met) {

  static String verdict(boolean met) {
    return met ? "yes" : "**no**";
  }
}
