package dev.nodelet.kube.internal;

/** A configuration value of {@code dev.nodelet.kube} that cannot be used; names the key that is wrong. */
public final class InvalidSettingException extends IllegalArgumentException {

  private static final long serialVersionUID = 1L;

  private final String key;

  public InvalidSettingException(String key, String problem) {
    super(key + ": " + problem);
    this.key = key;
  }

  /** The configuration key, e.g. {@code master.url}. */
  public String key() {
    return key;
  }
}
