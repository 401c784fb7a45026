package dev.nodelet.store.watch.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.nodelet.cache.core.ObjectManagers;
import dev.nodelet.cache.core.SwitchableObjectManager;
import dev.nodelet.kube.KubeClients;
import dev.nodelet.objectcache.ObjectManager;
import dev.nodelet.objectcache.ObjectReceipt;
import dev.nodelet.objectcache.PodReceipt;
import dev.nodelet.objectcache.testing.Resources;
import dev.nodelet.store.watch.WatchStoreStrategy;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.net.InetAddress;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * Receipts of a manager on the watch strategy against the embedded API server: the version served, its UID, when it
 * changed on the server and when Nodelet saw it; a new version after an update; stale while the API server is away
 * and fresh again after; no Secret data in any of it.
 */
class ReceiptsTest {

  private static final String NS = "receipts";
  private static final Duration WAIT = Duration.ofSeconds(30);

  @AutoClose
  private final Resources resources = new Resources();

  private <T extends AutoCloseable> T closeLater(T resource) {
    return resources.closeLater(resource);
  }

  private static Pod pod() {
    return new PodBuilder().withNewMetadata().withNamespace(NS).withName("web").withUid("uid-web").endMetadata()
        .withNewSpec().withNodeName("node-1")
        .addNewVolume().withName("config").withNewConfigMap().withName("settings").endConfigMap().endVolume()
        .addNewVolume().withName("creds").withNewSecret().withSecretName("password").endSecret().endVolume()
        .endSpec().build();
  }

  @Test
  void receiptsFollowTheServerAndTurnStaleWhileItIsAway() {
    EmbeddedApiServer server = closeLater(EmbeddedApiServer.builder().build().start());
    KubernetesClient writer = closeLater(server.newClient());
    KubernetesClient client = closeLater(KubeClients.builder()
        .masterUrl("http://" + InetAddress.getLoopbackAddress().getHostAddress() + ":" + server.port()).build());
    ConfigMap created = writer.configMaps().inNamespace(NS).resource(new ConfigMapBuilder().withNewMetadata()
        .withName("settings").endMetadata().addToData("k", "1").build()).create();
    writer.secrets().inNamespace(NS).resource(new SecretBuilder().withNewMetadata().withName("password")
        .endMetadata().addToStringData("password", "hunter2-receipt-secret").build()).create();

    SwitchableObjectManager<ConfigMap> configMaps = closeLater(ObjectManagers.configMaps(client).build());
    configMaps.useStrategy("watch", closeLater(WatchStoreStrategy.builder(client).build()));
    SwitchableObjectManager<Secret> secrets = closeLater(ObjectManagers.secrets(client).build());
    secrets.useStrategy("watch", closeLater(WatchStoreStrategy.builder(client).build()));
    Instant before = Instant.now();
    configMaps.registerPod(pod());
    secrets.registerPod(pod());
    configMaps.get(NS, "settings");
    secrets.get(NS, "password");

    ObjectReceipt first = await().atMost(WAIT).until(() -> only(configMaps), r -> r.resourceVersion().isPresent()
        && r.staleReason().isEmpty());
    assertThat(first.resource()).isEqualTo("configmaps");
    assertThat(first.uid()).contains(created.getMetadata().getUid());
    assertThat(first.resourceVersion()).contains(created.getMetadata().getResourceVersion());
    assertThat(first.strategy()).isEqualTo("watch");
    assertThat(first.lastChanged()).isPresent();
    assertThat(first.seen()).hasValueSatisfying(seen -> assertThat(seen).isAfterOrEqualTo(before));

    String updated = writer.configMaps().inNamespace(NS).withName("settings")
        .edit(cm -> new ConfigMapBuilder(cm).addToData("k", "2").build()).getMetadata().getResourceVersion();
    ObjectReceipt second = await().atMost(WAIT).until(() -> only(configMaps),
        r -> r.resourceVersion().equals(java.util.Optional.of(updated)));
    assertThat(second.seen().orElseThrow()).isAfterOrEqualTo(first.seen().orElseThrow());
    assertThat(second.uid()).isEqualTo(first.uid());

    server.stop();
    ObjectReceipt down = await().atMost(WAIT).until(() -> only(configMaps), ObjectReceipt::stale);
    assertThat(down.staleReason().orElseThrow()).contains("watch");
    // the last version seen is still what is served
    assertThat(down.resourceVersion()).contains(updated);
    await().atMost(WAIT).until(() -> only(secrets).stale());

    server.start();
    await().atMost(WAIT).until(() -> !only(configMaps).stale() && !only(secrets).stale());

    List<PodReceipt> secretReceipts = secrets.receipts();
    assertThat(secretReceipts).singleElement().satisfies(p -> {
      assertThat(p.uid()).isEqualTo("uid-web");
      assertThat(p.objects()).extracting(ObjectReceipt::name).containsExactly("password");
    });
    assertThat(secretReceipts.toString()).doesNotContain("hunter2-receipt-secret")
        .doesNotContain("aHVudGVyMi1yZWNlaXB0LXNlY3JldA");
  }

  @Test
  void anUnregisteredPodHasNoReceiptAndAnUnobservedObjectNoVersion() {
    EmbeddedApiServer server = closeLater(EmbeddedApiServer.builder().build().start());
    KubernetesClient client = closeLater(server.newClient());
    SwitchableObjectManager<ConfigMap> configMaps = closeLater(ObjectManagers.configMaps(client).build());
    configMaps.useStrategy("watch", closeLater(WatchStoreStrategy.builder(client).build()));
    configMaps.registerPod(pod());
    ObjectReceipt receipt = only(configMaps);
    // the object does not exist: nothing observed, so no version is claimed
    assertThat(receipt.resourceVersion()).isEmpty();
    assertThat(receipt.uid()).isEmpty();
    configMaps.unregisterPod(pod());
    assertThat(configMaps.receipts()).isEmpty();
  }

  private static <T extends io.fabric8.kubernetes.api.model.HasMetadata> ObjectReceipt only(
      ObjectManager<T> manager) {
    List<PodReceipt> receipts = manager.receipts();
    assertThat(receipts).hasSize(1);
    assertThat(receipts.get(0).objects()).hasSize(1);
    return receipts.get(0).objects().get(0);
  }
}
