package dev.nodelet.node.internal;

import static dev.nodelet.configuration.ConfigurationValues.within;

import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.TaintBuilder;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A validated {@link NodeConfiguration}.
 *
 * @param enabled whether the node registers at all
 * @param labels the configured labels, set at creation only
 * @param taints the taints set at creation only
 * @param maxPods the pods capacity
 * @param kubeletPort the port reported as {@code daemonEndpoints.kubeletEndpoint.Port}
 * @param address the InternalIP; empty to detect it
 * @param hostname the Hostname address and label; empty for the node name
 * @param reservedCpu cores kept back from allocatable
 * @param reservedMemory bytes kept back from allocatable
 * @param storagePath the folder whose file system is the ephemeral storage; empty for the default
 */
record NodeSettings(boolean enabled, Map<String, String> labels, List<Taint> taints, int maxPods, int kubeletPort,
    String address, String hostname, BigDecimal reservedCpu, BigDecimal reservedMemory, String storagePath) {

  /** The labels the node sets itself (the kubelet's default labels). */
  static final Set<String> OWN_LABELS = Set.of(NodeObjects.HOSTNAME_LABEL, NodeObjects.OS_LABEL,
      NodeObjects.ARCH_LABEL);
  private static final Set<String> EFFECTS = Set.of("NoSchedule", "PreferNoSchedule", "NoExecute");
  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?");
  private static final Pattern PREFIX =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

  NodeSettings {
    labels = Map.copyOf(labels);
    taints = List.copyOf(taints);
  }

  /** The defaults: what a configuration with {@code enabled=true} and nothing else gives. */
  static NodeSettings defaults() {
    return new NodeSettings(true, Map.of(), List.of(taint("nodelet.dev/bundles=true:NoSchedule", "taints")), 110,
        10250, "", "", BigDecimal.ZERO, BigDecimal.ZERO, "");
  }

  /** @throws IllegalArgumentException naming the key that is wrong and why */
  static NodeSettings from(NodeConfiguration config) {
    Map<String, String> labels = new LinkedHashMap<>();
    for (String entry : nonBlank(config.labels())) {
      int eq = entry.indexOf('=');
      if (eq < 0) {
        throw new IllegalArgumentException("labels: \"" + entry + "\" is not key=value");
      }
      String key = entry.substring(0, eq).strip();
      String value = entry.substring(eq + 1).strip();
      checkKey("labels", key);
      if (!value.isEmpty() && !NAME.matcher(value).matches()) {
        throw new IllegalArgumentException("labels: the value of " + key + " must be at most 63 letters, digits, "
            + "'-', '_' or '.', starting and ending with a letter or digit, was \"" + value + "\"");
      }
      if (OWN_LABELS.contains(key)) {
        throw new IllegalArgumentException("labels: " + key + " is set by the node itself; remove it");
      }
      labels.put(key, value);
    }
    List<Taint> taints = new ArrayList<>();
    for (String entry : nonBlank(config.taints())) {
      taints.add(taint(entry, "taints"));
    }
    int maxPods = (int) within("max.pods", config::max_pods, 1, 10000, "");
    int port = (int) within("kubelet.port", config::kubelet_port, 1, 65535, "");
    return new NodeSettings(config.enabled(), labels, taints, maxPods, port, strip(config.address()),
        strip(config.hostname()), quantity("reserved.cpu", config.reserved_cpu()),
        quantity("reserved.memory", config.reserved_memory()), strip(config.ephemeral_storage_path()));
  }

  /** {@code key=value:Effect} or {@code key:Effect}. */
  static Taint taint(String entry, String configKey) {
    int colon = entry.lastIndexOf(':');
    if (colon < 0) {
      throw new IllegalArgumentException(configKey + ": \"" + entry + "\" is not key=value:Effect or key:Effect");
    }
    String effect = entry.substring(colon + 1).strip();
    if (!EFFECTS.contains(effect)) {
      throw new IllegalArgumentException(configKey + ": the effect of \"" + entry + "\" must be NoSchedule, "
          + "PreferNoSchedule or NoExecute");
    }
    String keyValue = entry.substring(0, colon);
    int eq = keyValue.indexOf('=');
    String key = (eq < 0 ? keyValue : keyValue.substring(0, eq)).strip();
    String value = eq < 0 ? null : keyValue.substring(eq + 1).strip();
    checkKey(configKey, key);
    if (value != null && !value.isEmpty() && !NAME.matcher(value).matches()) {
      throw new IllegalArgumentException(configKey + ": the value of " + key + " must be at most 63 letters, "
          + "digits, '-', '_' or '.', starting and ending with a letter or digit, was \"" + value + "\"");
    }
    return new TaintBuilder().withKey(key).withValue(value == null || value.isEmpty() ? null : value)
        .withEffect(effect).build();
  }

  private static void checkKey(String configKey, String key) {
    int slash = key.indexOf('/');
    String prefix = slash < 0 ? null : key.substring(0, slash);
    String name = slash < 0 ? key : key.substring(slash + 1);
    if (!NAME.matcher(name).matches() || (prefix != null && (prefix.length() > 253
        || !PREFIX.matcher(prefix).matches()))) {
      throw new IllegalArgumentException(configKey + ": \"" + key + "\" is not a valid key: an optional DNS "
          + "subdomain and '/', then at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter "
          + "or digit");
    }
  }

  private static BigDecimal quantity(String key, String value) {
    String stripped = strip(value);
    BigDecimal amount;
    try {
      amount = Quantity.getAmountInBytes(new Quantity(stripped.isEmpty() ? "0" : stripped));
    } catch (RuntimeException e) {
      throw new IllegalArgumentException(key + ": not a quantity such as 500m or 256Mi, was \"" + stripped + "\"");
    }
    if (amount.signum() < 0) {
      throw new IllegalArgumentException(key + ": must not be negative, was " + stripped);
    }
    return amount;
  }

  private static List<String> nonBlank(String[] values) {
    // a .cfg file's "taints=" gives one empty string: no taint
    return values == null ? List.of()
        : java.util.Arrays.stream(values).map(String::strip).filter(s -> !s.isEmpty()).toList();
  }

  private static String strip(String value) {
    return value == null ? "" : value.strip();
  }

  @Override
  public String toString() {
    if (!enabled) {
      return "enabled=false (node mode off: no Node or Lease is written)";
    }
    return "enabled=" + enabled + ", labels=" + labels + ", taints=" + taints.stream().map(NodeSettings::format)
        .toList() + ", max.pods=" + maxPods + ", kubelet.port=" + kubeletPort
        + (address.isEmpty() ? "" : ", address=" + address) + (hostname.isEmpty() ? "" : ", hostname=" + hostname)
        + ", reserved.cpu=" + reservedCpu.toPlainString() + ", reserved.memory=" + reservedMemory.toPlainString()
        + (storagePath.isEmpty() ? "" : ", ephemeral.storage.path=" + storagePath);
  }

  static String format(Taint taint) {
    return taint.getKey() + (taint.getValue() == null ? "" : "=" + taint.getValue()) + ":" + taint.getEffect();
  }
}
