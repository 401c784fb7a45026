package dev.nodelet.examples.externaldriver;

import dev.nodelet.dra.grpc.v1.DeviceAttribute;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The driver's command line. Parsing creates nothing, so that {@code --help} and a wrong option leave no trace.
 *
 * @param attributes {@code name -> value} of every device, over the example's own
 */
record Options(Path registry, Path plugins, String name, int devices, Map<String, String> attributes) {

  static final String USAGE = """
      Usage: java -jar nodelet-example-external-driver.jar [OPTION]...
      A Nodelet DRA driver that streams one pool of example devices (nodelet.dra.v1); a number typed on standard
      input changes the device count.
        --registry DIR           the registration folder (default: /var/lib/nodelet/plugins_registry)
        --plugins DIR            the endpoint socket goes to DIR/NAME/dra.sock (default: /var/lib/nodelet/plugins)
        --name NAME              the driver name (default: external.example.com)
        --devices N              the number of devices, dev-0 ... dev-N-1 (default: 4)
        --attribute NAME=VALUE   an attribute of every device, repeatable, over the example's model, index and
                                 driverVersion; true/false is a bool, a whole number an int, a semantic version
                                 (1.2.3) a version, anything else a string
        --help                   prints this and exits
      """;

  private static final Pattern INTEGER = Pattern.compile("-?\\d{1,18}");
  private static final Pattern VERSION = Pattern.compile("\\d+\\.\\d+\\.\\d+([-+][0-9A-Za-z.+-]*)?");
  private static final List<String> WITH_VALUE = List.of("--registry", "--plugins", "--name", "--devices",
      "--attribute");

  /**
   * @return the options, or null when {@code --help} asks for the usage
   * @throws IllegalArgumentException one line that says what is wrong with the command line
   */
  static Options parse(String[] args) {
    if (Arrays.asList(args).contains("--help") || Arrays.asList(args).contains("-h")) {
      return null;
    }
    Path registry = Path.of("/var/lib/nodelet/plugins_registry");
    Path plugins = Path.of("/var/lib/nodelet/plugins");
    String name = "external.example.com";
    int devices = 4;
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
        case "--registry" -> registry = Path.of(value);
        case "--plugins" -> plugins = Path.of(value);
        case "--name" -> name = value;
        case "--devices" -> devices = count(value);
        default -> {
          int equals = value.indexOf('=');
          if (equals < 1) {
            throw new IllegalArgumentException("--attribute " + value + ": expected NAME=VALUE, e.g. model=a100");
          }
          attributes.put(value.substring(0, equals), value.substring(equals + 1));
        }
      }
    }
    return new Options(registry, plugins, name, devices, Map.copyOf(attributes));
  }

  /** An attribute value typed as the example driver bundle types them. */
  static DeviceAttribute typed(String value) {
    if (value.equals("true") || value.equals("false")) {
      return DeviceAttribute.newBuilder().setBoolValue(Boolean.parseBoolean(value)).build();
    }
    if (INTEGER.matcher(value).matches()) {
      return DeviceAttribute.newBuilder().setIntValue(Long.parseLong(value)).build();
    }
    if (VERSION.matcher(value).matches()) {
      return DeviceAttribute.newBuilder().setVersionValue(value).build();
    }
    return DeviceAttribute.newBuilder().setStringValue(value).build();
  }

  static int count(String value) {
    try {
      int devices = Integer.parseInt(value);
      if (devices >= 0 && devices <= 10_000) {
        return devices;
      }
    } catch (NumberFormatException e) {
      // said below
    }
    throw new IllegalArgumentException("--devices " + value + ": expected a whole number from 0 to 10000");
  }
}
