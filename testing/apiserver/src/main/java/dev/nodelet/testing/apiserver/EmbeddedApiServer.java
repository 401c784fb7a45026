package dev.nodelet.testing.apiserver;

import dev.nodelet.testing.apiserver.internal.ApiServerDispatcher;
import dev.nodelet.testing.apiserver.internal.Authorizer;
import dev.nodelet.testing.apiserver.internal.HttpFrontEnd;
import dev.nodelet.testing.apiserver.internal.PodLogProxy;
import dev.nodelet.testing.apiserver.internal.ServingCertificates;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Base64;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * A Kubernetes API server for tests and for the launcher's demo mode, built on the fabric8 mock server's CRUD
 * dispatcher, with the watch semantics the mock server lacks: field selectors on {@code spec.nodeName} and
 * {@code spec.driver}, one monotonic resourceVersion, watches resumed from a bounded event history with
 * {@code 410 Gone} beyond it, bookmarks, initial events, {@code generateName}, optimistic concurrency and delete
 * preconditions. Watches are served over WebSocket and over plain HTTP streaming.
 *
 * <p>Plain HTTP by default (HTTP/1.1, and HTTP/2 cleartext for clients that ask for it); with {@link Builder#tls()}
 * HTTPS instead, HTTP/2 negotiated by ALPN with HTTP/1.1 as the fallback, under a CA generated for this server that
 * {@link #clientConfig()} and {@link #writeKubeconfig} hand to clients. Every HTTP/2 connection carries at most
 * {@link #MAX_CONCURRENT_STREAMS} concurrent streams, as a kube-apiserver's does; a stream beyond it is refused
 * ({@code RST_STREAM(REFUSED_STREAM)}), so a client must open another connection or wait.
 *
 * <p>The state survives {@link #stop()} and {@link #start()}, which rebinds the same port, so tests can take the
 * server away and bring it back. Fault injection: {@link #failNext}, {@link #delayResponses}, {@link #cutWatches}.
 * Observation: {@link #openWatches}, {@link #writes}, {@link #deniedRequests}. RBAC: {@link Builder#authorize}.
 */
public final class EmbeddedApiServer implements AutoCloseable {

  /** The HTTP/2 {@code SETTINGS_MAX_CONCURRENT_STREAMS} this server announces and enforces, as a kube-apiserver. */
  public static final int MAX_CONCURRENT_STREAMS = HttpFrontEnd.MAX_CONCURRENT_STREAMS;

  private final ApiServerDispatcher dispatcher;
  private final ServingCertificates certificates; // null: plain HTTP
  private final String adminToken; // null: plain HTTP
  private final HttpFrontEnd frontEnd;

  private EmbeddedApiServer(Builder builder) {
    // issued once: clients keep trusting the server across stop() and start()
    this.certificates = builder.tls ? ServingCertificates.issue(builder.address) : null;
    this.adminToken = builder.tls ? new BigInteger(160, new SecureRandom()).toString(36) : null;
    this.dispatcher = new ApiServerDispatcher(builder.historySize, builder.bookmarkInterval,
        new Authorizer(builder.subjects, adminToken), builder.validateNames,
        Set.copyOf(builder.disabledFeatureGates));
    this.frontEnd = new HttpFrontEnd(dispatcher, builder.address, builder.port, certificates, builder.http2);
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Starts listening (again, on the same port after a {@link #stop()}). Returns this server. */
  public EmbeddedApiServer start() {
    dispatcher.start();
    try {
      frontEnd.start();
    } catch (RuntimeException e) {
      dispatcher.stop();
      throw e;
    }
    return this;
  }

  /**
   * Stops as a kube-apiserver does: refuses new requests first ({@link #refuseNewRequests()}), then ends every open
   * watch, then stops listening. The stored objects and the resourceVersion are kept.
   */
  public void stop() {
    frontEnd.refuseNew();
    dispatcher.stop();
    frontEnd.stop();
  }

  /**
   * The first step of {@link #stop()} alone, as a kube-apiserver that has begun to shut down: GOAWAY on every HTTP/2
   * connection (its open streams go on), a new connection closed at once, a new request answered 503. The open
   * watches go on until {@link #stop()} ends them; the server serves again only after a stop and a start.
   */
  public void refuseNewRequests() {
    frontEnd.refuseNew();
  }

  /** Stops the server and releases its threads. */
  @Override
  public void close() {
    stop();
  }

  public boolean isRunning() {
    return frontEnd.isRunning();
  }

  /** The port, bound on the first {@link #start()} and kept for restarts. */
  public int port() {
    return frontEnd.port();
  }

  /** The base URL, e.g. {@code http://127.0.0.1:41234}, or {@code https://...} with {@link Builder#tls()}. */
  public String url() {
    return (isTls() ? "https://" : "http://") + frontEnd.host() + ":" + port();
  }

  /** Whether this server serves HTTPS ({@link Builder#tls()}). */
  public boolean isTls() {
    return certificates != null;
  }

  /**
   * The PEM of the CA that signed this server's certificate, for clients to trust.
   *
   * @throws IllegalStateException if the server serves plain HTTP
   */
  public String caCertificatePem() {
    if (certificates == null) {
      throw new IllegalStateException("this embedded API server serves plain HTTP and has no CA; build it with tls()");
    }
    return certificates.caPem();
  }

  /**
   * The certificate this server presents to a node's API when it reads a pod's log, its kubelet client certificate
   * (self-signed, so its own CA): what a node trusts as its client CA, as a kubelet's {@code --client-ca-file}.
   */
  public String kubeletClientCaPem() {
    return PodLogProxy.clientCaPem();
  }

  /**
   * A client configuration for this server that ignores any kubeconfig of the environment; sends no token. Over
   * TLS it trusts this server's CA and nothing else.
   */
  public Config clientConfig() {
    ConfigBuilder config = new ConfigBuilder(Config.empty())
        .withMasterUrl(url())
        .withNamespace("default")
        .withRequestRetryBackoffLimit(0);
    if (isTls()) {
      config.withCaCertData(caCertificateData());
    }
    return config.build();
  }

  private String caCertificateData() {
    return Base64.getEncoder().encodeToString(caCertificatePem().getBytes(StandardCharsets.US_ASCII));
  }

  /** The same, sending {@code token} as its bearer token (see {@link Builder#authorize}). */
  public Config clientConfig(String token) {
    return new ConfigBuilder(clientConfig()).withOauthToken(requireToken(token)).build();
  }

  /** A new client for this server, allowed everything; the caller closes it. */
  public KubernetesClient newClient() {
    return new KubernetesClientBuilder().withConfig(clientConfig()).build();
  }

  /** A new client for this server that sends {@code token}; the caller closes it. */
  public KubernetesClient newClient(String token) {
    return new KubernetesClientBuilder().withConfig(clientConfig(token)).build();
  }

  /**
   * Writes a kubeconfig that points at this server, so kubectl or another process can reach it. Over TLS it holds
   * the CA as {@code certificate-authority-data} and an admin token allowed everything, as a request without a
   * token is (kubectl asks for a user name on an HTTPS server when the kubeconfig names no credentials).
   */
  public Path writeKubeconfig(Path file) {
    return writeKubeconfigWithUser(file, adminToken == null ? "{}" : "{token: \"" + adminToken + "\"}");
  }

  /** Writes a kubeconfig that points at this server and sends {@code token}. */
  public Path writeKubeconfig(Path file, String token) {
    return writeKubeconfigWithUser(file, "{token: \"" + requireToken(token) + "\"}");
  }

  private Path writeKubeconfigWithUser(Path file, String user) {
    String cluster = "    server: " + url() + (isTls() ? "\n    certificate-authority-data: " + caCertificateData() : "");
    String yaml = String.join("\n",
        "apiVersion: v1",
        "kind: Config",
        "clusters:",
        "- name: nodelet-embedded",
        "  cluster:",
        cluster,
        "users:",
        "- name: nodelet-embedded",
        "  user: " + user,
        "contexts:",
        "- name: nodelet-embedded",
        "  context:",
        "    cluster: nodelet-embedded",
        "    user: nodelet-embedded",
        "    namespace: default",
        "current-context: nodelet-embedded",
        "");
    try {
      Files.createDirectories(file.toAbsolutePath().getParent());
      Files.writeString(file, yaml);
      if (Files.getFileStore(file).supportsFileAttributeView(PosixFileAttributeView.class)) {
        // it may hold a token: readable by its owner only, as kubectl writes kubeconfigs
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
      }
      return file;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write kubeconfig " + file, e);
    }
  }

  /** The client connections open now, each one TCP connection (HTTP/1.1 or HTTP/2). */
  public int openConnections() {
    return frontEnd.openConnections();
  }

  /**
   * How many requests arrived per protocol since the server was made, keyed by ALPN name: {@code http/1.1},
   * {@code h2} (over TLS, or cleartext).
   */
  public Map<String, Long> requestsByProtocol() {
    return frontEnd.requestsByProtocol();
  }

  /** The current (latest) resourceVersion. */
  public long resourceVersion() {
    return dispatcher.currentResourceVersion();
  }

  /**
   * The next {@code times} requests with this verb on this resource (plural, e.g. {@code pods}; {@code null} for
   * any) fail with {@code status} and a Kubernetes Status body. Failures queue up in the order given.
   */
  public void failNext(Verb verb, String resource, int times, int status) {
    dispatcher.faults().failNext(Objects.requireNonNull(verb, "verb"), resource, times, status);
  }

  /** Drops every pending injected failure. */
  public void clearFailures() {
    dispatcher.faults().clearFailures();
  }

  /** Delays the body of every response by {@code delay} ({@link Duration#ZERO} turns it off). */
  public void delayResponses(Duration delay) {
    dispatcher.faults().delay(Objects.requireNonNull(delay, "delay"));
  }

  /** Ends every open watch as a dropped connection would; clients are expected to resume. */
  public void cutWatches() {
    dispatcher.cutWatches();
  }

  /** The number of open watches on a resource (plural), whatever their selectors. */
  public int openWatches(String resource) {
    return dispatcher.openWatches(resource, null);
  }

  /** The number of open watches on a resource (plural) with exactly this field selector. */
  public int openWatches(String resource, String fieldSelector) {
    return dispatcher.openWatches(resource, Objects.requireNonNull(fieldSelector, "fieldSelector"));
  }

  /** Every write request received since the start or the last {@link #clearWrites()}, in order. */
  public List<RecordedWrite> writes() {
    return dispatcher.writes();
  }

  /** How many requests with this verb on this resource (plural) the server has received, failed ones included. */
  public long requestCount(Verb verb, String resource) {
    return dispatcher.requestCount(Objects.requireNonNull(verb, "verb"), resource);
  }

  public void clearWrites() {
    dispatcher.clearWrites();
  }

  /** Every request refused with 401 or 403 since the start or the last {@link #clearDeniedRequests()}, in order. */
  public List<DeniedRequest> deniedRequests() {
    return dispatcher.authorizer().denied();
  }

  public void clearDeniedRequests() {
    dispatcher.authorizer().clearDenied();
  }

  private static String requireToken(String token) {
    if (token == null || token.isEmpty() || !token.chars().allMatch(c -> c > ' ' && c < 127 && c != '"')) {
      throw new IllegalArgumentException("a token must be non-empty printable ASCII without spaces or quotes");
    }
    return token;
  }

  /** Configuration of an {@link EmbeddedApiServer}. */
  public static final class Builder {
    private InetAddress address = InetAddress.getLoopbackAddress();
    private int port;
    private int historySize = 10_000;
    private Duration bookmarkInterval = Duration.ofSeconds(60);
    private final Map<String, Authorizer.Subject> subjects = new LinkedHashMap<>();
    private boolean validateNames = true;
    private final Set<String> disabledFeatureGates = new HashSet<>();
    private boolean tls;
    private boolean http2 = true;

    private Builder() {
    }

    /**
     * Serves HTTPS instead of plain HTTP: HTTP/2 where the client offers it by ALPN, else HTTP/1.1, with a serving
     * certificate for {@code localhost}, the loopback addresses and the listening address, signed by a CA generated
     * for this server ({@link #caCertificatePem()}).
     */
    public Builder tls() {
      this.tls = true;
      return this;
    }

    /**
     * Serves HTTPS as {@link #tls()} does, but offers only HTTP/1.1 by ALPN, as an API server behind a proxy that
     * speaks no HTTP/2: a client that offers only {@code h2} fails its TLS handshake.
     */
    public Builder tlsWithoutHttp2() {
      this.tls = true;
      this.http2 = false;
      return this;
    }

    /** The address to listen on; loopback by default. */
    public Builder address(InetAddress address) {
      this.address = Objects.requireNonNull(address, "address");
      return this;
    }

    /** The port; 0 (the default) picks a free one. */
    public Builder port(int port) {
      if (port < 0 || port > 65535) {
        throw new IllegalArgumentException("port must be 0..65535, was " + port);
      }
      this.port = port;
      return this;
    }

    /** How many events the watch history keeps; a watch from an older resourceVersion gets 410 Gone. */
    public Builder historySize(int historySize) {
      if (historySize < 1) {
        throw new IllegalArgumentException("historySize must be at least 1, was " + historySize);
      }
      this.historySize = historySize;
      return this;
    }

    /** How often watches that allow bookmarks receive one. */
    public Builder bookmarkInterval(Duration bookmarkInterval) {
      if (bookmarkInterval.isNegative() || bookmarkInterval.isZero()) {
        throw new IllegalArgumentException("bookmarkInterval must be positive, was " + bookmarkInterval);
      }
      this.bookmarkInterval = bookmarkInterval;
      return this;
    }

    /**
     * Requests that carry {@code Authorization: Bearer <token>} act as {@code user} and may do what {@code rules}
     * allow (RBAC rules, e.g. a ClusterRole's, see {@link ClusterRoles}); anything else is answered
     * {@code 403 Forbidden} as the API server does, and recorded in {@link #deniedRequests()}. Once a token is
     * registered, a request with any other token gets {@code 401 Unauthorized}; requests without a token are still
     * allowed everything.
     */
    public Builder authorize(String token, String user, Collection<PolicyRule> rules) {
      if (user == null || user.isBlank()) {
        throw new IllegalArgumentException("user must not be blank");
      }
      subjects.put(requireToken(token), new Authorizer.Subject(user, List.copyOf(rules)));
      return this;
    }

    /**
     * Stores objects whose {@code metadata.name} the API server would refuse ({@code 422 Invalid}), for tests that
     * feed a client bad objects as a misbehaving writer could have left them. Every other check still applies.
     */
    public Builder acceptInvalidNames() {
      this.validateNames = false;
      return this;
    }

    /**
     * Serves as a kube-apiserver with these feature gates off: it drops the fields they guard from the
     * ResourceSlices it stores, unless the stored object already uses them, as the real server does. Known gates:
     * {@code DRAPartitionableDevices} ({@code spec.sharedCounters}, {@code spec.devices[].consumesCounters}),
     * {@code DRADeviceTaints} ({@code spec.devices[].taints}) and {@code DRADeviceBindingConditions}
     * ({@code spec.devices[].bindingConditions}, {@code bindingFailureConditions}, {@code bindsToNode}).
     */
    public Builder disableFeatureGates(String... gates) {
      for (String gate : gates) {
        if (!ApiServerDispatcher.FEATURE_GATES.contains(gate)) {
          throw new IllegalArgumentException("unknown feature gate \"" + gate + "\"; known: "
              + new TreeSet<>(ApiServerDispatcher.FEATURE_GATES));
        }
        disabledFeatureGates.add(gate);
      }
      return this;
    }

    public EmbeddedApiServer build() {
      return new EmbeddedApiServer(this);
    }
  }
}
