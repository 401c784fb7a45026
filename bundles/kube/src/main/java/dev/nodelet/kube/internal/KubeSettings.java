package dev.nodelet.kube.internal;

import dev.nodelet.kube.internal.watch.EngineSettings;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import java.util.regex.Pattern;

/**
 * The validated settings of the Nodelet Kubernetes client. Built from the OSGi configuration with
 * {@link #from(KubeConfiguration, UnaryOperator, Supplier)} or, in plain Java, with {@link #builder()}; either way
 * an unusable value throws an {@link InvalidSettingException} that names its key.
 */
public final class KubeSettings {

  public static final String MASTER_URL = "master.url";
  public static final String KUBECONFIG_PATH = "kubeconfig.path";
  public static final String CONTEXT = "context";
  public static final String NODE_NAME = "node.name";
  public static final String REQUEST_TIMEOUT = "request.timeout";
  public static final String CONNECTION_TIMEOUT = "connection.timeout";
  public static final String WATCH_RESTART_RATE = "watch.restart.rate";
  public static final String WATCH_RESTART_BURST = "watch.restart.burst";
  public static final String HTTP2_ENABLED = "http2.enabled";

  /** The environment variable that names the node when {@code node.name} is not configured. */
  public static final String NODE_NAME_ENV = "NODE_NAME";

  static final int DEFAULT_TIMEOUT_MILLIS = 10_000;

  // RFC 1123 subdomain, as Kubernetes requires for Node names
  private static final Pattern DNS_SUBDOMAIN =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  private static final int DNS_SUBDOMAIN_MAX_LENGTH = 253;

  private final String masterUrl;
  private final Path kubeconfig;
  private final String context;
  private final String nodeName;
  private final Duration requestTimeout;
  private final Duration connectionTimeout;
  private final EngineSettings watch;
  private final boolean http2;

  private KubeSettings(Builder builder) {
    this.masterUrl = validMasterUrl(builder.masterUrl);
    this.kubeconfig = validKubeconfig(builder.kubeconfig);
    this.context = builder.context;
    if (context != null && masterUrl != null && kubeconfig == null) {
      throw new InvalidSettingException(CONTEXT,
          "context '" + context + "' has no kubeconfig to come from: " + MASTER_URL + " is set and "
              + KUBECONFIG_PATH + " is not");
    }
    this.nodeName = validNodeName(builder.nodeName);
    this.requestTimeout = validTimeout(REQUEST_TIMEOUT, builder.requestTimeout);
    this.connectionTimeout = validTimeout(CONNECTION_TIMEOUT, builder.connectionTimeout);
    this.watch = validWatch(builder.watchRestartRate, builder.watchRestartBurst);
    this.http2 = builder.http2;
  }

  public static Builder builder() {
    return new Builder();
  }

  /**
   * Settings from the OSGi configuration. An empty {@code node.name} falls back to the environment variable
   * {@value #NODE_NAME_ENV}, then to the host name in lower case.
   *
   * @param config the configuration
   * @param environment looks up environment variables ({@code System::getenv} outside tests)
   * @param hostName supplies the host name, or {@code null} if it cannot be determined; only called when needed
   */
  public static KubeSettings from(KubeConfiguration config, UnaryOperator<String> environment,
      Supplier<String> hostName) {
    return builder()
        .masterUrl(config.master_url())
        .kubeconfig(config.kubeconfig_path())
        .context(config.context())
        .nodeName(resolveNodeName(config.node_name(), environment, hostName))
        .requestTimeout(Duration.ofMillis(config.request_timeout()))
        .connectionTimeout(Duration.ofMillis(config.connection_timeout()))
        .watchRestart(config.watch_restart_rate(), config.watch_restart_burst())
        .http2(config.http2_enabled())
        .build();
  }

  private static String resolveNodeName(String configured, UnaryOperator<String> environment,
      Supplier<String> hostName) {
    if (!isBlank(configured)) {
      return configured.trim();
    }
    String fromEnvironment = environment.apply(NODE_NAME_ENV);
    if (!isBlank(fromEnvironment)) {
      return fromEnvironment.trim();
    }
    String host = hostName.get();
    if (isBlank(host)) {
      throw new InvalidSettingException(NODE_NAME,
          "not set, the environment variable " + NODE_NAME_ENV + " is not set and the host name is unknown");
    }
    // the kubelet also lower-cases the host name it defaults to
    return host.trim().toLowerCase(Locale.ROOT);
  }

  /** The API server URL that overrides any other source, if configured. */
  public Optional<String> masterUrl() {
    return Optional.ofNullable(masterUrl);
  }

  /** The kubeconfig file, if configured; it was readable when these settings were built. */
  public Optional<Path> kubeconfig() {
    return Optional.ofNullable(kubeconfig);
  }

  /** The kubeconfig context, if configured. */
  public Optional<String> context() {
    return Optional.ofNullable(context);
  }

  public String nodeName() {
    return nodeName;
  }

  public Duration requestTimeout() {
    return requestTimeout;
  }

  public Duration connectionTimeout() {
    return connectionTimeout;
  }

  /** The settings of the reflectors that share this client. */
  public EngineSettings watch() {
    return watch;
  }

  /**
   * @return whether the client speaks HTTP/2 over a pool of connections (Jetty); else HTTP/1.1 over the JDK client,
   *     one connection per open watch
   */
  public boolean http2() {
    return http2;
  }

  /** Where the client configuration comes from, for log lines; names no credentials. */
  public String source() {
    if (masterUrl != null) {
      return kubeconfig == null ? "master URL " + masterUrl
          : "master URL " + masterUrl + " with the credentials of kubeconfig " + kubeconfig;
    }
    return kubeconfig != null ? "kubeconfig " + kubeconfig : "automatic configuration";
  }

  @Override
  public String toString() {
    return "KubeSettings[" + source() + (context == null ? "" : ", context " + context) + ", node " + nodeName
        + ", request timeout " + requestTimeout.toMillis() + " ms, connection timeout "
        + connectionTimeout.toMillis() + " ms, watch restarts " + watch.restartRate() + "/s burst "
        + watch.restartBurst() + (http2 ? ", HTTP/2" : ", HTTP/1.1") + "]";
  }

  private static String validMasterUrl(String value) {
    if (isBlank(value)) {
      return null;
    }
    // the value is not echoed: a URL can carry credentials
    String problem = "must be an absolute http or https URL with a host and without user information";
    URI uri;
    try {
      uri = new URI(value.trim());
    } catch (URISyntaxException e) {
      throw new InvalidSettingException(MASTER_URL, problem);
    }
    String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    if (!(scheme.equals("http") || scheme.equals("https")) || uri.getHost() == null
        || uri.getRawUserInfo() != null) {
      throw new InvalidSettingException(MASTER_URL, problem);
    }
    return uri.toString();
  }

  private static Path validKubeconfig(String value) {
    if (isBlank(value)) {
      return null;
    }
    Path path;
    try {
      path = Path.of(value.trim());
    } catch (InvalidPathException e) {
      throw new InvalidSettingException(KUBECONFIG_PATH, "'" + value + "' is not a valid path");
    }
    if (!Files.isRegularFile(path) || !Files.isReadable(path)) {
      throw new InvalidSettingException(KUBECONFIG_PATH, "'" + path + "' is not a readable file");
    }
    return path;
  }

  private static String validNodeName(String value) {
    if (isBlank(value)) {
      throw new InvalidSettingException(NODE_NAME, "must not be empty");
    }
    if (value.length() > DNS_SUBDOMAIN_MAX_LENGTH || !DNS_SUBDOMAIN.matcher(value).matches()) {
      throw new InvalidSettingException(NODE_NAME,
          "'" + value + "' is not a valid node name (lower case RFC 1123 subdomain, at most 253 characters)");
    }
    return value;
  }

  private static Duration validTimeout(String key, Duration value) {
    Objects.requireNonNull(value, key);
    if (value.isNegative() || value.isZero() || value.toMillis() > Integer.MAX_VALUE) {
      throw new InvalidSettingException(key, "must be between 1 and " + Integer.MAX_VALUE + " ms, was "
          + value.toMillis() + " ms");
    }
    return value;
  }

  private static EngineSettings validWatch(double rate, int burst) {
    if (!(rate > 0) || Double.isInfinite(rate)) {
      throw new InvalidSettingException(WATCH_RESTART_RATE, "must be a positive number of watches per second, was "
          + rate);
    }
    if (burst < 1) {
      throw new InvalidSettingException(WATCH_RESTART_BURST, "must be at least 1, was " + burst);
    }
    return EngineSettings.builder().restartRate(rate).restartBurst(burst).build();
  }

  private static boolean isBlank(String value) {
    return value == null || value.isBlank();
  }

  /** Collects the settings; {@link #build()} validates them. Empty strings mean "not set". */
  public static final class Builder {
    private String masterUrl;
    private String kubeconfig;
    private String context;
    private String nodeName;
    private Duration requestTimeout = Duration.ofMillis(DEFAULT_TIMEOUT_MILLIS);
    private Duration connectionTimeout = Duration.ofMillis(DEFAULT_TIMEOUT_MILLIS);
    private double watchRestartRate = EngineSettings.DEFAULT_RESTART_RATE;
    private int watchRestartBurst = EngineSettings.DEFAULT_RESTART_BURST;
    private boolean http2 = true;

    private Builder() {
    }

    public Builder masterUrl(String masterUrl) {
      this.masterUrl = masterUrl;
      return this;
    }

    public Builder kubeconfig(String path) {
      this.kubeconfig = path;
      return this;
    }

    public Builder context(String context) {
      this.context = isBlank(context) ? null : context.trim();
      return this;
    }

    /** Required: the name of this node's Node object. */
    public Builder nodeName(String nodeName) {
      this.nodeName = nodeName;
      return this;
    }

    public Builder requestTimeout(Duration requestTimeout) {
      this.requestTimeout = requestTimeout;
      return this;
    }

    public Builder connectionTimeout(Duration connectionTimeout) {
      this.connectionTimeout = connectionTimeout;
      return this;
    }

    /** How many watches may be re-established per second after failures, and how many at once. */
    public Builder watchRestart(double perSecond, int burst) {
      this.watchRestartRate = perSecond;
      this.watchRestartBurst = burst;
      return this;
    }

    /** HTTP/2 over a pool of connections (Jetty), the default; false: HTTP/1.1 over the JDK client. */
    public Builder http2(boolean enabled) {
      this.http2 = enabled;
      return this;
    }

    /** @throws InvalidSettingException naming the first key whose value cannot be used */
    public KubeSettings build() {
      return new KubeSettings(this);
    }
  }
}
