package dev.nodelet.launcher;

import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The command line; see {@link #USAGE}. Parsing touches no folder: {@link #prepare()} creates them, once the launcher
 * knows it starts Nodelet (not for {@code --help}, {@code --version} or {@code --exec}).
 *
 * @param readyTimeoutSeconds how long to wait for readiness before exiting with status 1: {@link #DEFAULT_READY}
 *     when not given (60 s, or no limit with persistence on), 0 for no limit
 */
record Options(Path kubeconfig, boolean inCluster, String context, String nodeName, Path etcDir, Path workDir,
    boolean temporaryWorkDir, Path bundlesDir, int apiPort, boolean shell, int readyTimeoutSeconds,
    boolean help, boolean version, Path deployDir, Path runDir, String exec, Optional<Metrics> metrics,
    int healthPort, String healthAddress, boolean jsonLogs, boolean nodeMode) {

  /** {@link #readyTimeoutSeconds} when {@code --ready-timeout} is not given. */
  static final int DEFAULT_READY = -1;

  /** A node's name is a DNS subdomain (RFC 1123), as the API server requires. */
  private static final Pattern NODE_NAME =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

  static final String USAGE = String.join("\n",
      "usage: java -jar nodelet-launcher.jar [options]",
      "  --kubeconfig PATH   serve the cluster of this kubeconfig (default: $KUBECONFIG; without either, the",
      "                      embedded Kubernetes API server with a demo node)",
      "  --in-cluster        serve the cluster this pod runs in, with the pod's service account",
      "  --context NAME      kubeconfig context (default: the current one)",
      "  --node NAME         this node's name (default: $NODE_NAME, else nodelet-demo on the embedded server,",
      "                      else the host name)",
      "  --etc DIR           configuration folder watched by FileInstall (default: etc)",
      "  --deploy DIR        hot deploy folder: bundles copied here start, removed ones stop (default: deploy",
      "                      next to the --etc folder)",
      "  --run DIR           folder of the local command socket nodelet.sock, mode 0600 (default: run next",
      "                      to the --etc folder)",
      "  --exec 'COMMAND'    run one shell command in the Nodelet serving --run (e.g. 'nodelet:objects'),",
      "                      print its output and exit with its status",
      "  --work DIR          framework cache and generated files (default: a fresh temporary folder)",
      "  --ready-timeout S   exit with status 1 when not ready after S seconds, 0 for no limit (default: 60 s;",
      "                      no limit when persistence is on, as stored objects are served meanwhile)",
      "  --api-port N        port of the embedded API server (default: a free one)",
      "  --health-port N     serve /livez, /readyz, /system/health and /receipts on this port (default: off)",
      "  --health-address A  address of --health-port (default: 127.0.0.1; 0.0.0.0 for a kubelet's probes)",
      "  --log-format F      text (default) or json: one JSON object per log line on standard error",
      "  --metrics-port N    serve Prometheus metrics at http://ADDRESS:N/metrics (default: no metrics endpoint;",
      "                      0 takes a free port)",
      "  --metrics-address A the address of the metrics endpoint (default: 127.0.0.1, this node only;",
      "                      0.0.0.0 for every interface)",
      "  --node-mode         be a Kubernetes node of its own, on a machine without a kubelet: register the Node,",
      "                      renew its Lease, report its status (always on with the embedded API server)",
      "  --shell             start the Gogo shell on standard input even when it is not a terminal",
      "  --no-shell          do not start the Gogo shell (the default when standard input is not a terminal)",
      "  --version           print Nodelet's version and exit",
      "  --help              this text");

  /**
   * The metrics endpoint the command line asks for.
   *
   * @param port the port, 0 for a free one
   * @param address the IP address to listen on
   */
  record Metrics(int port, String address) {
    static final String LOOPBACK = "127.0.0.1";
    static final String PID = "dev.nodelet.metrics";

    Map<String, Object> configuration() {
      return Map.of("port", port, "address", address);
    }
  }

  /** Nodelet's version, from the launcher jar's manifest. */
  static String versionLine() {
    String version = Options.class.getPackage().getImplementationVersion();
    return "Nodelet " + (version == null ? "(version unknown: not run from nodelet-launcher.jar)" : version)
        + " (Java " + Runtime.version() + ")";
  }

  static Options parse(String[] args, Map<String, String> env) {
    Path kubeconfig = blankToNull(env.get("KUBECONFIG")) == null ? null : Path.of(env.get("KUBECONFIG"));
    boolean inCluster = false;
    String context = null;
    String node = blankToNull(env.get("NODE_NAME"));
    Path etc = Path.of("etc");
    Path work = null;
    int port = 0;
    boolean shell = System.console() != null;
    boolean help = false;
    boolean version = false;
    Path deploy = null;
    Path run = null;
    String exec = null;
    int healthPort = -1;
    String healthAddress = "127.0.0.1";
    boolean jsonLogs = false;
    boolean nodeMode = false;
    int metricsPort = -1;
    String metricsAddress = null;
    int readyTimeout = DEFAULT_READY;
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      switch (arg) {
        case "--kubeconfig" -> kubeconfig = Path.of(value(args, ++i, arg));
        case "--in-cluster" -> inCluster = true;
        case "--context" -> context = value(args, ++i, arg);
        case "--node" -> node = value(args, ++i, arg);
        case "--etc" -> etc = Path.of(value(args, ++i, arg));
        case "--work" -> work = Path.of(value(args, ++i, arg));
        case "--ready-timeout" -> readyTimeout = seconds(value(args, ++i, arg), arg);
        case "--api-port" -> port = port(value(args, ++i, arg), arg);
        case "--metrics-port" -> metricsPort = port(value(args, ++i, arg), arg);
        case "--metrics-address" -> metricsAddress = address(value(args, ++i, arg), arg);
        case "--node-mode" -> nodeMode = true;
        case "--no-shell" -> shell = false;
        case "--shell" -> shell = true;
        case "--deploy" -> deploy = Path.of(value(args, ++i, arg));
        case "--run" -> run = Path.of(value(args, ++i, arg));
        case "--exec" -> exec = value(args, ++i, arg);
        case "--health-port" -> healthPort = port(value(args, ++i, arg), arg);
        case "--health-address" -> healthAddress = address(value(args, ++i, arg), arg);
        case "--log-format" -> jsonLogs = logFormat(value(args, ++i, arg));
        case "--help", "-h" -> help = true;
        case "--version" -> version = true;
        default -> throw new IllegalArgumentException("unknown option: " + arg);
      }
    }
    Path base = etc.toAbsolutePath().getParent();
    deploy = deploy != null ? deploy : base.resolve("deploy");
    run = run != null ? run : base.resolve("run");
    if (help || version) {
      // nothing else is checked: they answer whatever the other options say
      return new Options(kubeconfig, inCluster, context, node, etc, work, false, null, port, false, readyTimeout,
          help, version, deploy, run, null, Optional.empty(), healthPort, healthAddress, jsonLogs, nodeMode);
    }
    // fabric8's automatic configuration would prefer a kubeconfig to the service account
    if (inCluster && kubeconfig != null) {
      throw new IllegalArgumentException(
          "--in-cluster cannot be used with a kubeconfig (--kubeconfig or KUBECONFIG)");
    }
    if (kubeconfig != null && !Files.isReadable(kubeconfig)) {
      throw new IllegalArgumentException("kubeconfig not readable: " + kubeconfig);
    }
    if (node == null) {
      node = kubeconfig == null && !inCluster ? "nodelet-demo" : NodeletFramework.hostName();
    }
    if (node.length() > 253 || !NODE_NAME.matcher(node).matches()) {
      throw new IllegalArgumentException("node name " + node + " is not a valid Kubernetes node name: lower case"
          + " letters, digits, '-' and '.', starting and ending with a letter or digit, at most 253 characters"
          + " (--node or NODE_NAME)");
    }
    if (metricsAddress != null && metricsPort < 0) {
      throw new IllegalArgumentException("--metrics-address needs --metrics-port: the endpoint runs only on a port"
          + " given");
    }
    if (healthPort == 0) {
      throw new IllegalArgumentException("--health-port must be 1..65535 (probes need a fixed port), was 0");
    }
    Optional<Metrics> metrics = metricsPort < 0 ? Optional.empty()
        : Optional.of(new Metrics(metricsPort, metricsAddress == null ? Metrics.LOOPBACK : metricsAddress));
    if (exec != null) {
      return new Options(kubeconfig, inCluster, context, node, etc, work, false, null, port, false, readyTimeout,
          false, false, deploy, run, exec, metrics, healthPort, healthAddress, jsonLogs, nodeMode);
    }
    return new Options(kubeconfig, inCluster, context, node, etc, work, work == null,
        NodeletFramework.bundlesDir(), port, shell, readyTimeout, false, false, deploy, run, null, metrics,
        healthPort, healthAddress, jsonLogs, nodeMode);
  }

  /**
   * Creates the folders Nodelet starts with: {@code --etc}, {@code --deploy} and the work folder (a new temporary one
   * when {@code --work} is not given, which the returned options name).
   *
   * @throws IllegalArgumentException naming the folder that cannot be created and the option that chooses it
   */
  Options prepare() {
    for (Path folder : List.of(etcDir, deployDir)) {
      try {
        Files.createDirectories(folder);
      } catch (IOException e) {
        throw new IllegalArgumentException("cannot create " + folder + " (" + e + "); choose another one with "
            + (folder == etcDir ? "--etc" : "--deploy"));
      }
    }
    Path work = workDir;
    try {
      work = temporaryWorkDir ? Files.createTempDirectory("nodelet-") : Files.createDirectories(workDir);
    } catch (IOException e) {
      throw new IllegalArgumentException("cannot create the work folder " + (temporaryWorkDir ? "in "
          + System.getProperty("java.io.tmpdir") : workDir) + " (" + e + "); choose another one with --work");
    }
    return new Options(kubeconfig, inCluster, context, nodeName, etcDir, work, temporaryWorkDir, bundlesDir, apiPort,
        shell, readyTimeoutSeconds, help, version, deployDir, runDir, exec, metrics, healthPort, healthAddress,
        jsonLogs, nodeMode);
  }

  private static String value(String[] args, int i, String option) {
    if (i >= args.length || args[i].startsWith("--")) {
      throw new IllegalArgumentException(option + " needs a value");
    }
    return args[i];
  }

  private static int seconds(String value, String option) {
    try {
      int s = Integer.parseInt(value);
      if (s < 0) {
        throw new NumberFormatException();
      }
      return s;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(option + " must be a number of seconds (0 for no limit), was " + value);
    }
  }

  private static int port(String value, String option) {
    try {
      int p = Integer.parseInt(value);
      if (p < 0 || p > 65535) {
        throw new NumberFormatException();
      }
      return p;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(option + " must be a port number (0..65535), was " + value);
    }
  }

  private static String address(String value, String option) {
    try {
      return InetAddress.getByName(value).getHostAddress();
    } catch (UnknownHostException e) {
      throw new IllegalArgumentException(option + " must be an IP address or a known host name of this machine,"
          + " e.g. 127.0.0.1 or 0.0.0.0; was " + value);
    }
  }

  private static boolean logFormat(String value) {
    return switch (value) {
      case "text" -> false;
      case "json" -> true;
      default -> throw new IllegalArgumentException("--log-format must be text or json, was " + value);
    };
  }

  private static String blankToNull(String s) {
    return s == null || s.isBlank() ? null : s;
  }
}
