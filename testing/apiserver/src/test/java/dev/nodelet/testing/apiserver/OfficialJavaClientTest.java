package dev.nodelet.testing.apiserver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.google.gson.reflect.TypeToken;
import io.kubernetes.client.Discovery;
import io.kubernetes.client.informer.ResourceEventHandler;
import io.kubernetes.client.informer.SharedIndexInformer;
import io.kubernetes.client.informer.SharedInformerFactory;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1ConfigMap;
import io.kubernetes.client.openapi.models.V1ConfigMapList;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1PodList;
import io.kubernetes.client.openapi.models.V1Status;
import io.kubernetes.client.util.Config;
import io.kubernetes.client.util.Watch;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesApi;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesObject;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The official Kubernetes Java client ({@code io.kubernetes:client-java}, OkHttp) against the embedded API server
 * over TLS, configured from the kubeconfig the server writes, as it would be against a cluster.
 */
class OfficialJavaClientTest {

  @TempDir
  Path dir;
  private EmbeddedApiServer server;
  private ApiClient client;
  private CoreV1Api core;

  @BeforeEach
  void start() throws Exception {
    server = EmbeddedApiServer.builder().tls().build().start();
    client = Config.fromConfig(server.writeKubeconfig(dir.resolve("kubeconfig")).toString());
    client.setHttpClient(client.getHttpClient().newBuilder().readTimeout(0, TimeUnit.SECONDS).build());
    core = new CoreV1Api(client);
  }

  @AfterEach
  void stop() {
    client.getHttpClient().dispatcher().executorService().shutdownNow();
    client.getHttpClient().connectionPool().evictAll();
    server.close();
  }

  private static V1ConfigMap configMap(String name, Map<String, String> data) {
    return new V1ConfigMap().metadata(new V1ObjectMeta().name(name)).data(data);
  }

  @Test
  void discoveryFindsEveryServedResource() throws Exception {
    Set<Discovery.APIResource> resources = new Discovery(client).findAll();
    Map<String, Discovery.APIResource> byName = resources.stream()
        .collect(Collectors.toMap(r -> r.getResourcePlural() + "." + r.getGroup(), r -> r, (a, b) -> a));
    assertThat(byName).containsKeys("pods.", "configmaps.", "nodes.", "resourceslices.resource.k8s.io",
        "leases.coordination.k8s.io");
    Discovery.APIResource pods = byName.get("pods.");
    assertThat(pods.getKind()).isEqualTo("Pod");
    assertThat(pods.getNamespaced()).isTrue();
    assertThat(pods.getSubResources()).contains("status");
    assertThat(byName.get("resourceslices.resource.k8s.io").getNamespaced()).isFalse();
    assertThat(byName.get("resourceslices.resource.k8s.io").getPreferredVersion()).isEqualTo("v1");
  }

  @Test
  void typedListsAndCreateReadReplaceDelete() throws Exception {
    V1PodList pods = core.listNamespacedPod("default").execute();
    assertThat(pods.getKind()).isEqualTo("PodList");
    assertThat(pods.getItems()).isEmpty();

    V1ConfigMap created = core.createNamespacedConfigMap("default", configMap("a", Map.of("k", "v"))).execute();
    assertThat(created.getMetadata().getUid()).isNotBlank();
    V1ConfigMap read = core.readNamespacedConfigMap("a", "default").execute();
    assertThat(read.getData()).containsEntry("k", "v");
    read.setData(Map.of("k", "w"));
    V1ConfigMap replaced = core.replaceNamespacedConfigMap("a", "default", read).execute();
    assertThat(Long.parseLong(replaced.getMetadata().getResourceVersion()))
        .isGreaterThan(Long.parseLong(created.getMetadata().getResourceVersion()));
    // a stale replace is a conflict
    assertThatThrownBy(() -> core.replaceNamespacedConfigMap("a", "default", read).execute())
        .isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.getCode()).isEqualTo(409));
    V1ConfigMapList list = core.listNamespacedConfigMap("default").execute();
    assertThat(list.getKind()).isEqualTo("ConfigMapList");
    assertThat(list.getItems()).extracting(c -> c.getData().get("k")).containsExactly("w");

    V1Status deleted = core.deleteNamespacedConfigMap("a", "default").execute();
    assertThat(deleted.getStatus()).isEqualTo("Success");
    assertThatThrownBy(() -> core.readNamespacedConfigMap("a", "default").execute())
        .isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.getCode()).isEqualTo(404));
  }

  @Test
  void resourceSlicesThroughTheGenericApi() throws Exception {
    DynamicKubernetesApi slices = new DynamicKubernetesApi("resource.k8s.io", "v1", "resourceslices", client);
    DynamicKubernetesObject slice = new DynamicKubernetesObject(com.google.gson.JsonParser.parseString("""
        {"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{"name":"s"},
         "spec":{"driver":"gpu.example.com","nodeName":"n","pool":{"name":"p","generation":1,
         "resourceSliceCount":1},"devices":[{"name":"d","taints":[{"key":"k","effect":"NoSchedule"}]}]}}
        """).getAsJsonObject());
    DynamicKubernetesObject created = slices.create(slice).throwsApiException().getObject();
    assertThat(created.getRaw().getAsJsonObject("spec").getAsJsonArray("devices").get(0).getAsJsonObject()
        .getAsJsonArray("taints").get(0).getAsJsonObject().has("timeAdded")).isTrue();
    assertThat(slices.list().throwsApiException().getObject().getItems()).hasSize(1);
  }

  @Test
  void anInformerSeesAddsUpdatesAndDeletes() throws Exception {
    SharedInformerFactory factory = new SharedInformerFactory(client);
    try {
      SharedIndexInformer<V1ConfigMap> informer = factory.sharedIndexInformerFor(
          params -> core.listNamespacedConfigMap("default").resourceVersion(params.resourceVersion)
              .watch(params.watch).timeoutSeconds(params.timeoutSeconds).buildCall(null),
          V1ConfigMap.class, V1ConfigMapList.class);
      List<String> events = new CopyOnWriteArrayList<>();
      informer.addEventHandler(new ResourceEventHandler<>() {
        @Override
        public void onAdd(V1ConfigMap obj) {
          events.add("add " + obj.getMetadata().getName());
        }

        @Override
        public void onUpdate(V1ConfigMap oldObj, V1ConfigMap newObj) {
          events.add("update " + newObj.getMetadata().getName() + " " + newObj.getData().get("k"));
        }

        @Override
        public void onDelete(V1ConfigMap obj, boolean deletedFinalStateUnknown) {
          events.add("delete " + obj.getMetadata().getName());
        }
      });
      core.createNamespacedConfigMap("default", configMap("before", Map.of("k", "0"))).execute();
      factory.startAllRegisteredInformers();
      await().atMost(Duration.ofSeconds(30)).until(informer::hasSynced);
      V1ConfigMap live = core.createNamespacedConfigMap("default", configMap("live", Map.of("k", "1"))).execute();
      live.setData(Map.of("k", "2"));
      core.replaceNamespacedConfigMap("live", "default", live).execute();
      core.deleteNamespacedConfigMap("live", "default").execute();
      await().atMost(Duration.ofSeconds(30)).until(() -> events.contains("delete live"));
      assertThat(events).containsExactly("add before", "add live", "update live 2", "delete live");
      // OkHttp negotiated HTTP/2 by ALPN for every request, the informer's watch included
      assertThat(server.requestsByProtocol()).containsOnlyKeys("h2");
    } finally {
      factory.stopAllRegisteredInformers();
    }
  }

  @Test
  void aWatchFromAResourceVersionSeesOnlyLaterEvents() throws Exception {
    core.createNamespacedConfigMap("default", configMap("old", Map.of())).execute();
    String rv = core.listNamespacedConfigMap("default").execute().getMetadata().getResourceVersion();
    core.createNamespacedConfigMap("default", configMap("new", Map.of())).execute();
    try (Watch<V1ConfigMap> watch = Watch.createWatch(client,
        core.listNamespacedConfigMap("default").watch(true).resourceVersion(rv).timeoutSeconds(5).buildCall(null),
        new TypeToken<Watch.Response<V1ConfigMap>>() { }.getType())) {
      Watch.Response<V1ConfigMap> first = watch.next();
      assertThat(first.type).isEqualTo("ADDED");
      assertThat(first.object.getMetadata().getName()).isEqualTo("new");
    }
  }
}
