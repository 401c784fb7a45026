package dev.nodelet.testing.apiserver;

import dev.nodelet.testing.apiserver.internal.ApiServerDispatcher;
import dev.nodelet.testing.apiserver.internal.Authorizer;
import dev.nodelet.testing.apiserver.internal.HttpFrontEnd;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
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
 * <p>The state survives {@link #stop()} and {@link #start()}, which rebinds the same port, so tests can take the
 * server away and bring it back. Fault injection: {@link #failNext}, {@link #delayResponses}, {@link #cutWatches}.
 * Observation: {@link #openWatches}, {@link #writes}, {@link #deniedRequests}. RBAC: {@link Builder#authorize}.
 */
public final class EmbeddedApiServer implements AutoCloseable {

  private final ApiServerDispatcher dispatcher;
  private final HttpFrontEnd frontEnd;

  private EmbeddedApiServer(Builder builder) {
    this.dispatcher = new ApiServerDispatcher(builder.historySize, builder.bookmarkInterval,
        new Authorizer(builder.subjects), builder.validateNames, Set.copyOf(builder.disabledFeatureGates));
    this.frontEnd = new HttpFrontEnd(dispatcher, builder.address, builder.port);
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

  /** Stops listening and ends every open watch; the stored objects and the resourceVersion are kept. */
  public void stop() {
    dispatcher.stop();
    frontEnd.stop();
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

  /** The base URL, e.g. {@code http://127.0.0.1:41234}. */
  public String url() {
    return "http://" + frontEnd.host() + ":" + port();
  }

  /** A client configuration for this server that ignores any kubeconfig of the environment; sends no token. */
  public Config clientConfig() {
    return new ConfigBuilder(Config.empty())
        .withMasterUrl(url())
        .withNamespace("default")
        .withRequestRetryBackoffLimit(0)
        .build();
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

  /** Writes a kubeconfig that points at this server, so kubectl or another process can reach it. */
  public Path writeKubeconfig(Path file) {
    return writeKubeconfigWithUser(file, "{}");
  }

  /** Writes a kubeconfig that points at this server and sends {@code token}. */
  public Path writeKubeconfig(Path file, String token) {
    return writeKubeconfigWithUser(file, "{token: \"" + requireToken(token) + "\"}");
  }

  private Path writeKubeconfigWithUser(Path file, String user) {
    String yaml = String.join("\n",
        "apiVersion: v1",
        "kind: Config",
        "clusters:",
        "- name: nodelet-embedded",
        "  cluster:",
        "    server: " + url(),
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
      return Files.writeString(file, yaml);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write kubeconfig " + file, e);
    }
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

    private Builder() {
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
