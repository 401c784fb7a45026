package dev.nodelet.pods.internal;

/**
 * What a container needs cannot be delivered: a ConfigMap, Secret or key is missing and not optional (the message
 * is the kubelet's: {@code configmap "x" not found}), or the configuration PID it chose is taken. Never carries
 * secret data. {@link #transient} marks one that resolves itself (the managers have not registered the pod yet).
 */
final class ConfigError extends Exception {

  private static final long serialVersionUID = 1L;

  final boolean transientError;

  ConfigError(String message, boolean transientError) {
    super(message);
    this.transientError = transientError;
  }
}
