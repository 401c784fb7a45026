package dev.nodelet.kube;

import dev.nodelet.kube.internal.KubeClientFactory;
import dev.nodelet.kube.internal.KubeSettings;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.Objects;

/**
 * The Kubernetes client that the {@code nodelet-kube} service builds, for plain Java programs: bounded thread pools,
 * no retries of its own (each Nodelet part retries on its own terms), no HTTP body logging (Secret data would reach
 * the log). The caller closes it.
 *
 * @since 1.2
 */
public final class KubeClients {

  private KubeClients() {
  }

  /** @return a builder: the cluster from the usual kubeconfig or in-cluster lookup unless told otherwise */
  public static Builder builder() {
    return new Builder();
  }

  /** Options of a client; {@link #build()} validates them. */
  public static final class Builder {
    private final KubeSettings.Builder settings = KubeSettings.builder();

    private Builder() {
      // the node name matters to the OSGi service only; the client does not use it
      settings.nodeName("plain-java");
    }

    /**
     * @param masterUrl the API server's URL; overrides the kubeconfig's
     * @return this builder
     */
    public Builder masterUrl(String masterUrl) {
      settings.masterUrl(Objects.requireNonNull(masterUrl, "masterUrl"));
      return this;
    }

    /**
     * @param path a kubeconfig file to read instead of the usual lookup
     * @return this builder
     */
    public Builder kubeconfig(String path) {
      settings.kubeconfig(Objects.requireNonNull(path, "path"));
      return this;
    }

    /**
     * @param context the kubeconfig context to use instead of the current one
     * @return this builder
     */
    public Builder context(String context) {
      settings.context(Objects.requireNonNull(context, "context"));
      return this;
    }

    /**
     * @param requestTimeout how long one request may take
     * @return this builder
     */
    public Builder requestTimeout(Duration requestTimeout) {
      settings.requestTimeout(Objects.requireNonNull(requestTimeout, "requestTimeout"));
      return this;
    }

    /**
     * @param connectionTimeout how long connecting may take
     * @return this builder
     */
    public Builder connectionTimeout(Duration connectionTimeout) {
      settings.connectionTimeout(Objects.requireNonNull(connectionTimeout, "connectionTimeout"));
      return this;
    }

    /**
     * @param enabled HTTP/2 over a pool of connections (Jetty's HTTP/2 client, the default) or, if false, HTTP/1.1
     *     over the JDK client with one connection per open watch
     * @return this builder
     */
    public Builder http2(boolean enabled) {
      settings.http2(enabled);
      return this;
    }

    /**
     * @return a new client; close it when done
     * @throws IllegalArgumentException naming the option that cannot be used and why
     */
    public KubernetesClient build() {
      return new KubeClientFactory().create(settings.build());
    }
  }
}
