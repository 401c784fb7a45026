package dev.nodelet.objectcache;

/** Quotes names in error messages the way Go's {@code %q} does for the characters names can hold. */
final class Quote {

  private Quote() {
  }

  static String of(String s) {
    return "\"" + String.valueOf(s).replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
  }
}
