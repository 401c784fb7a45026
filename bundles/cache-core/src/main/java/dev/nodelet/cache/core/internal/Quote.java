package dev.nodelet.cache.core.internal;

/** Quotes names in error messages the way Go's {@code %q} does for the characters names can hold. */
public final class Quote {

  private Quote() {
  }

  public static String of(String s) {
    return "\"" + String.valueOf(s).replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
  }
}
