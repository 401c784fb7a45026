package dev.nodelet.examples.kubeletdriver;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The driver's command line. Parsing creates nothing and connects to nothing, so that {@code --help} and a wrong
 * option leave no trace.
 *
 * @param server the API server's URL, or null
 * @param kubeconfig the kubeconfig file, or null
 * @param attributes {@code name -> value} of every device
 * @param healthTimeoutSeconds the {@code health_check_timeout_seconds} of every health report
 */
record Options(Path registry, Path plugins, String name, String node, String server, Path kubeconfig, int devices,
    Map<String, String> attributes, long healthTimeoutSeconds) {

  static final String USAGE = """
      Usage: java -jar nodelet-example-kubelet-driver.jar --node NAME [--kubeconfig FILE | --server URL] [OPTION]...
      A DRA driver written for the kubelet: it publishes its own ResourceSlice, registers through the plugin
      registration folder, prepares claims over the kubelet's DRA API v1 and reports device health over the
      kubelet's health API v1. Start it with umask 077.
        --node NAME              the node whose devices these are (default: $NODE_NAME)
        --kubeconfig FILE        the kubeconfig to publish the ResourceSlice with (default: $KUBECONFIG,
                                 ~/.kube/config or the pod's service account)
        --server URL             the API server's URL, for a server without authentication
        --registry DIR           the registration folder (default: /var/lib/nodelet/plugins_registry)
        --plugins DIR            the endpoint socket goes to DIR/NAME/dra.sock (default: /var/lib/nodelet/plugins)
        --name NAME              the driver name (default: kubelet.example.com)
        --devices N              the number of devices, dev-0 ... dev-N-1 (default: 2)
        --attribute NAME=VALUE   an attribute of every device, repeatable; true/false is a bool, a whole number
                                 an int, a semantic version (1.2.3) a version, anything else a string
        --health-timeout SECONDS how long each health report holds; without a new one the devices turn Unknown
                                 (default: 30)
        --help                   prints this and exits
      Lines on standard input: "unhealthy DEVICE [MESSAGE]" and "healthy DEVICE [MESSAGE]" change a device's
      health, "silent" stops the health reports.
      """;

  private static final Pattern INTEGER = Pattern.compile("-?\\d{1,18}");
  private static final Pattern VERSION = Pattern.compile("\\d+\\.\\d+\\.\\d+([-+][0-9A-Za-z.+-]*)?");
  private static final List<String> WITH_VALUE = List.of("--node", "--kubeconfig", "--server", "--registry",
      "--plugins", "--name", "--devices", "--attribute", "--health-timeout");

  /**
   * @param nodeFromEnvironment {@code $NODE_NAME}, or null
   * @return the options, or null when {@code --help} asks for the usage
   * @throws IllegalArgumentException one line that says what is wrong with the command line
   */
  static Options parse(String[] args, String nodeFromEnvironment) {
    if (Arrays.asList(args).contains("--help") || Arrays.asList(args).contains("-h")) {
      return null;
    }
    Path registry = Path.of("/var/lib/nodelet/plugins_registry");
    Path plugins = Path.of("/var/lib/nodelet/plugins");
    String name = "kubelet.example.com";
    String node = nodeFromEnvironment;
    String server = null;
    Path kubeconfig = null;
    int devices = 2;
    long healthTimeout = 30;
    Map<String, String> attributes = new LinkedHashMap<>();
    for (int i = 0; i < args.length; i += 2) {
      String option = args[i];
      if (!WITH_VALUE.contains(option)) {
        throw new IllegalArgumentException("unknown option " + option);
      }
      if (i + 1 == args.length) {
        throw new IllegalArgumentException(option + " needs a value");
      }
      String value = args[i + 1];
      switch (option) {
        case "--node" -> node = value;
        case "--kubeconfig" -> kubeconfig = Path.of(value);
        case "--server" -> server = value;
        case "--registry" -> registry = Path.of(value);
        case "--plugins" -> plugins = Path.of(value);
        case "--name" -> name = value;
        case "--devices" -> devices = count(value);
        case "--health-timeout" -> healthTimeout = seconds(value);
        default -> {
          int equals = value.indexOf('=');
          if (equals < 1) {
            throw new IllegalArgumentException("--attribute " + value + ": expected NAME=VALUE, e.g. model=a100");
          }
          attributes.put(value.substring(0, equals), value.substring(equals + 1));
        }
      }
    }
    if (node == null || node.isEmpty()) {
      throw new IllegalArgumentException("--node NAME (or $NODE_NAME) is required: the node whose devices these are");
    }
    if (server != null && kubeconfig != null) {
      throw new IllegalArgumentException("give --server or --kubeconfig, not both");
    }
    return new Options(registry, plugins, name, node, server, kubeconfig, devices, Map.copyOf(attributes),
        healthTimeout);
  }

  /** An attribute value typed as the example driver bundle types them. */
  static DeviceAttribute typed(String value) {
    if (value.equals("true") || value.equals("false")) {
      return new DeviceAttribute(Boolean.parseBoolean(value), null, null, null);
    }
    if (INTEGER.matcher(value).matches()) {
      return new DeviceAttribute(null, Long.parseLong(value), null, null);
    }
    if (VERSION.matcher(value).matches()) {
      return new DeviceAttribute(null, null, null, value);
    }
    return new DeviceAttribute(null, null, value, null);
  }

  private static long seconds(String value) {
    try {
      long seconds = Long.parseLong(value);
      if (seconds >= 1 && seconds <= 3600) {
        return seconds;
      }
    } catch (NumberFormatException e) {
      // said below
    }
    throw new IllegalArgumentException("--health-timeout " + value + ": expected whole seconds from 1 to 3600");
  }

  private static int count(String value) {
    try {
      int devices = Integer.parseInt(value);
      if (devices >= 0 && devices <= 128) {
        return devices;
      }
    } catch (NumberFormatException e) {
      // said below
    }
    throw new IllegalArgumentException("--devices " + value + ": expected a whole number from 0 to 128");
  }
}
