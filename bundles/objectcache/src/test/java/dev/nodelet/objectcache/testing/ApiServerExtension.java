package dev.nodelet.objectcache.testing;

import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * An embedded API server and a client of it for each test ({@code @RegisterExtension}): started before the test's
 * {@code @BeforeEach} methods, closed after its {@code @AfterEach} methods.
 */
public final class ApiServerExtension implements BeforeEachCallback, AfterEachCallback {

  private final UnaryOperator<EmbeddedApiServer.Builder> configure;
  private final List<ConfigMap> seeds = new ArrayList<>();
  private EmbeddedApiServer server;
  private KubernetesClient client;

  public ApiServerExtension() {
    this(builder -> builder);
  }

  /** @param configure sets options of the server, e.g. its history size */
  public ApiServerExtension(UnaryOperator<EmbeddedApiServer.Builder> configure) {
    this.configure = configure;
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    server = configure.apply(EmbeddedApiServer.builder()).build().start();
    client = server.newClient();
    seeds.forEach(seed -> client.configMaps().resource(seed).create());
  }

  @Override
  public void afterEach(ExtensionContext context) {
    client.close();
    server.close();
  }

  /** @return the server of the running test */
  public EmbeddedApiServer server() {
    return server;
  }

  /** @return a client of the server, closed after the test */
  public KubernetesClient client() {
    return client;
  }

  /**
   * Every test's server holds this ConfigMap before the test's {@code @BeforeEach} methods run.
   *
   * @return this extension
   */
  public ApiServerExtension withConfigMap(String namespace, String name, Map<String, String> data) {
    seeds.add(configMap(namespace, name, data));
    return this;
  }

  /** Creates ConfigMap {@code namespace/name} holding {@code data}; returns it as the server stored it. */
  public ConfigMap createConfigMap(String namespace, String name, Map<String, String> data) {
    return client.configMaps().resource(configMap(namespace, name, data)).create();
  }

  private static ConfigMap configMap(String namespace, String name, Map<String, String> data) {
    return new ConfigMapBuilder().withNewMetadata().withNamespace(namespace).withName(name).endMetadata().withData(data)
        .build();
  }
}
