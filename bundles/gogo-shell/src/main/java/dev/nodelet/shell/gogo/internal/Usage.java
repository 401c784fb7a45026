package dev.nodelet.shell.gogo.internal;

import java.util.Arrays;
import java.util.Map;

/**
 * The usage of each {@code nodelet:*} Gogo command. Gogo picks a command's method by the number and types of the
 * arguments and, when none fits, says only {@code Cannot coerce get(Token) to any of [...]}: so every command has an
 * overload taking any arguments ({@code String...}), which Gogo picks only when no other fits, and which answers
 * with the command's usage.
 */
final class Usage {

  private static final Map<String, String> USAGE = Map.of(
      "pods", "nodelet:pods [--receipts]\n       nodelet:pods --bundles [<namespace>]",
      "objects", "nodelet:objects",
      "get", "nodelet:get [--show-secret] <configmap|secret> <namespace> <name>",
      "strategy", "nodelet:strategy [<configmap|secret>]\n"
          + "       nodelet:strategy [--force] <configmap|secret> <get|ttl|watch|another installed strategy>",
      "watch", "nodelet:watch <configmap|secret> [<namespace> [<name>]]",
      "watchstats", "nodelet:watchstats",
      "drivers", "nodelet:drivers",
      "slices", "nodelet:slices",
      "claims", "nodelet:claims");

  private Usage() {}

  /** @return the usage of {@code nodelet:<command>} */
  static String of(String command) {
    return "usage: " + USAGE.get(command);
  }

  /**
   * @param command the command's name, without the scope
   * @param args the arguments it was given
   * @return the error to throw: what was wrong, then the usage
   */
  static IllegalArgumentException wrong(String command, String... args) {
    return problem(command, args.length == 0 ? "arguments missing"
        : "wrong arguments: " + String.join(" ", Arrays.asList(args)));
  }

  /**
   * @param command the command's name, without the scope
   * @param problem what was wrong
   * @return the error to throw: the problem, then the usage
   */
  static IllegalArgumentException problem(String command, String problem) {
    return new IllegalArgumentException("nodelet:" + command + ": " + problem + "\n" + of(command));
  }
}
