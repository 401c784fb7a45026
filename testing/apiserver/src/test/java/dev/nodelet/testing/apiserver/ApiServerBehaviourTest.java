package dev.nodelet.testing.apiserver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher.Action;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The Kubernetes API behaviour Nodelet relies on, through a real fabric8 client. Runs against the embedded API
 * server, or against a real cluster when {@code NODELET_TEST_KUBECONFIG} is set.
 */
class ApiServerBehaviourTest {

  private TestCluster cluster;

  @BeforeEach
  void start() {
    cluster = TestCluster.start();
  }

  @AfterEach
  void stop() {
    cluster.close();
  }

  private Pod pod(String name, String node, Map<String, String> labels) {
    return cluster.client.pods().inNamespace(cluster.namespace).resource(new PodBuilder()
        .withNewMetadata().withName(name).withLabels(labels).endMetadata()
        .withNewSpec().withNodeName(node).addNewContainer().withName("c").withImage("busybox").endContainer()
        .endSpec().build()).create();
  }

  private ResourceSlice slice(String name, String node, String driver) {
    return cluster.client.resources(ResourceSlice.class).resource(new ResourceSliceBuilder()
        .withNewMetadata().withName(name + "-" + cluster.suffix).endMetadata()
        .withNewSpec().withNodeName(node + "-" + cluster.suffix).withDriver(driver)
        .withNewPool().withName("pool").withGeneration(1L).withResourceSliceCount(1L).endPool()
        .endSpec().build()).create();
  }

  private ConfigMap configMap(String name, String value) {
    return cluster.client.configMaps().inNamespace(cluster.namespace).resource(new ConfigMapBuilder()
        .withNewMetadata().withName(name).endMetadata().addToData("k", value).build()).create();
  }

  private static List<String> names(List<? extends HasMetadata> items) {
    return items.stream().map(i -> i.getMetadata().getName()).sorted().collect(Collectors.toList());
  }

  private static long rv(HasMetadata object) {
    return Long.parseLong(object.getMetadata().getResourceVersion());
  }

  @Test
  void aGetUpdateOrDeleteByNameReachesOnlyTheObjectOfItsKind() {
    configMap("twin", "1");
    cluster.client.secrets().inNamespace(cluster.namespace).resource(new SecretBuilder().withNewMetadata()
        .withName("twin").endMetadata().addToStringData("k", "secret").build()).create();

    assertThat(cluster.client.configMaps().inNamespace(cluster.namespace).withName("twin").get().getData())
        .containsEntry("k", "1");
    assertThat(cluster.client.secrets().inNamespace(cluster.namespace).withName("twin").get().getData())
        .containsKey("k");
    cluster.client.configMaps().inNamespace(cluster.namespace).withName("twin")
        .edit(c -> new ConfigMapBuilder(c).addToData("k", "2").build());
    assertThat(cluster.client.configMaps().inNamespace(cluster.namespace).withName("twin").get().getData())
        .containsEntry("k", "2");
    cluster.client.configMaps().inNamespace(cluster.namespace).withName("twin").delete();
    await().atMost(Duration.ofSeconds(30)).until(() -> cluster.client.configMaps().inNamespace(cluster.namespace)
        .withName("twin").get() == null);
    assertThat(cluster.client.secrets().inNamespace(cluster.namespace).withName("twin").get()).isNotNull();
    assertThat(cluster.client.configMaps().inNamespace(cluster.namespace).withName("absent").get()).isNull();
  }

  @Test
  void podsAreSelectedByNodeNameWithEqualsAndNotEquals() {
    pod("p1", "node-a", Map.of());
    pod("p2", "node-b", Map.of());
    pod("p3", null, Map.of());
    var pods = cluster.client.pods().inNamespace(cluster.namespace);

    assertThat(names(pods.withField("spec.nodeName", "node-a").list().getItems())).containsExactly("p1");
    assertThat(names(pods.withoutField("spec.nodeName", "node-a").list().getItems())).containsExactly("p2", "p3");
    assertThat(names(pods.withField("metadata.name", "p2").list().getItems())).containsExactly("p2");
    assertThat(names(pods.withField("metadata.namespace", cluster.namespace).withField("spec.nodeName", "node-b")
        .list().getItems())).containsExactly("p2");
  }

  @Test
  void resourceSlicesAreSelectedByNodeNameAndDriver() {
    slice("s1", "node-a", "gpu.example.com");
    slice("s2", "node-a", "nic.example.com");
    slice("s3", "node-b", "gpu.example.com");
    var slices = cluster.client.resources(ResourceSlice.class);

    assertThat(names(slices.withField("spec.nodeName", "node-a-" + cluster.suffix).list().getItems()))
        .containsExactly("s1-" + cluster.suffix, "s2-" + cluster.suffix);
    assertThat(names(slices.withField("spec.nodeName", "node-a-" + cluster.suffix)
        .withField("spec.driver", "gpu.example.com").list().getItems()))
        .containsExactly("s1-" + cluster.suffix);
    assertThat(names(slices.withField("spec.driver", "gpu.example.com")
        .withoutField("spec.nodeName", "node-a-" + cluster.suffix).list().getItems()))
        .contains("s3-" + cluster.suffix).doesNotContain("s1-" + cluster.suffix);
  }

  @Test
  void watchWithFieldSelectorSeesOnlyItsObjects() {
    Recorder<Pod> recorder = new Recorder<>();
    try (Watch ignored = cluster.client.pods().inNamespace(cluster.namespace)
        .withField("spec.nodeName", "node-a").watch(recorder)) {
      pod("other", "node-b", Map.of());
      pod("mine", "node-a", Map.of());
      cluster.client.pods().inNamespace(cluster.namespace).withName("mine").edit(p -> new PodBuilder(p)
          .editMetadata().addToLabels("x", "y").endMetadata().build());
      cluster.client.pods().inNamespace(cluster.namespace).withName("mine").withGracePeriod(0).delete();
      await().atMost(Duration.ofSeconds(30))
          .until(() -> recorder.lines().contains("DELETED mine"));
      assertThat(recorder.lines()).startsWith("ADDED mine", "MODIFIED mine").doesNotContain("ADDED other");
    }
  }

  @Test
  void watchWithLabelSelectorTurnsLeavingIntoDeleted() {
    configMap("cm", "1");
    Recorder<ConfigMap> recorder = new Recorder<>();
    var configMaps = cluster.client.configMaps().inNamespace(cluster.namespace);
    configMaps.withName("cm").edit(c -> new ConfigMapBuilder(c).editMetadata().addToLabels("app", "x")
        .endMetadata().build());
    try (Watch ignored = configMaps.withLabel("app", "x").watch(recorder)) {
      recorder.awaitLines(1);
      configMaps.withName("cm").edit(c -> new ConfigMapBuilder(c).editMetadata().addToLabels("app", "y")
          .endMetadata().build());
      recorder.awaitLines(2);
      assertThat(recorder.lines()).containsExactly("ADDED cm", "DELETED cm");
    }
  }

  @Test
  void deletingABoundPodMarksItUntilItsNodeDeletesItWithGraceZero() {
    Pod unbound = cluster.client.pods().inNamespace(cluster.namespace).resource(new PodBuilder()
        .withNewMetadata().withName("unbound").endMetadata()
        .withNewSpec().addNewContainer().withName("c").withImage("busybox").endContainer().endSpec().build()).create();
    var pods = cluster.client.pods().inNamespace(cluster.namespace);
    Recorder<Pod> recorder = new Recorder<>();
    try (Watch ignored = pods.withField("metadata.name", "bound").watch(recorder)) {
      Pod bound = pod("bound", "node-a", Map.of());
      pods.withName("bound").delete();

      Pod marked = pods.withName("bound").get();
      assertThat(marked).as("a pod on a node stays until the node has stopped it").isNotNull();
      assertThat(marked.getMetadata().getDeletionGracePeriodSeconds()).isEqualTo(30L);
      java.time.Instant at = java.time.Instant.parse(marked.getMetadata().getDeletionTimestamp());
      assertThat(at).isBetween(java.time.Instant.now().plusSeconds(25), java.time.Instant.now().plusSeconds(31));
      assertThat(rv(marked)).isGreaterThan(rv(bound));
      recorder.awaitLines(2);
      assertThat(recorder.lines()).containsExactly("ADDED bound", "MODIFIED bound");

      // a second delete may only shorten the grace; a longer one changes nothing
      pods.withName("bound").withGracePeriod(60).delete();
      assertThat(pods.withName("bound").get().getMetadata().getResourceVersion())
          .isEqualTo(marked.getMetadata().getResourceVersion());
      pods.withName("bound").withGracePeriod(5).delete();
      Pod shortened = pods.withName("bound").get();
      assertThat(shortened.getMetadata().getDeletionGracePeriodSeconds()).isEqualTo(5L);
      assertThat(java.time.Instant.parse(shortened.getMetadata().getDeletionTimestamp()))
          .isEqualTo(at.minusSeconds(25));

      pods.withName("bound").withGracePeriod(0).delete();
      recorder.awaitLines(4);
      assertThat(recorder.lines()).containsExactly("ADDED bound", "MODIFIED bound", "MODIFIED bound", "DELETED bound");
      assertThat(pods.withName("bound").get()).isNull();
    }
    // a pod no node runs goes at once
    pods.withName(unbound.getMetadata().getName()).delete();
    assertThat(pods.withName("unbound").get()).isNull();
  }

  @Test
  void aPodsOwnGracePeriodAppliesAndATerminalPodGoesAtOnce() {
    var pods = cluster.client.pods().inNamespace(cluster.namespace);
    pods.resource(new PodBuilder().withNewMetadata().withName("quick").endMetadata()
        .withNewSpec().withNodeName("node-a").withTerminationGracePeriodSeconds(3L)
        .addNewContainer().withName("c").withImage("busybox").endContainer().endSpec().build()).create();
    pods.withName("quick").delete();
    assertThat(pods.withName("quick").get().getMetadata().getDeletionGracePeriodSeconds()).isEqualTo(3L);

    pod("done", "node-a", Map.of());
    pods.withName("done").subresource("status").edit(p -> new PodBuilder(p).withNewStatus().withPhase("Succeeded")
        .endStatus().build());
    pods.withName("done").delete();
    assertThat(pods.withName("done").get()).isNull();
  }

  @Test
  void deleteCollectionHonoursFieldSelector() {
    pod("a1", "node-a", Map.of());
    pod("a2", "node-a", Map.of());
    pod("b1", "node-b", Map.of());
    var pods = cluster.client.pods().inNamespace(cluster.namespace);

    pods.withField("spec.nodeName", "node-a").withGracePeriod(0).delete();

    await().atMost(Duration.ofSeconds(30)).until(() -> names(pods.list().getItems()).equals(List.of("b1")));
  }

  @Test
  void unsupportedFieldLabelIsRejected() {
    assertThatThrownBy(() -> cluster.client.configMaps().inNamespace(cluster.namespace)
        .withField("spec.nodeName", "x").list())
        .isInstanceOfSatisfying(KubernetesClientException.class, e -> {
          assertThat(e.getCode()).isEqualTo(400);
          assertThat(e.getMessage()).contains("field label not supported: spec.nodeName");
        });
  }

  @Test
  void everyWriteGetsTheNextResourceVersionAndListsReportTheLatest() {
    ConfigMap a = configMap("a", "1");
    ConfigMap a2 = cluster.client.configMaps().inNamespace(cluster.namespace).withName("a")
        .edit(c -> new ConfigMapBuilder(c).addToData("k", "2").build());
    ConfigMap b = configMap("b", "1");

    assertThat(rv(a)).isLessThan(rv(a2));
    assertThat(rv(a2)).isLessThan(rv(b));
    long listRv = Long.parseLong(cluster.client.configMaps().inNamespace(cluster.namespace).list()
        .getMetadata().getResourceVersion());
    assertThat(listRv).isGreaterThanOrEqualTo(rv(b));
  }

  @Test
  void watchFromAResourceVersionSendsOnlyLaterEvents() {
    configMap("a", "1");
    ConfigMap b = configMap("b", "1");
    var configMaps = cluster.client.configMaps().inNamespace(cluster.namespace);
    configMaps.withName("a").edit(c -> new ConfigMapBuilder(c).addToData("k", "2").build());
    configMap("c", "1");
    configMaps.withName("b").delete();

    Recorder<ConfigMap> recorder = new Recorder<>();
    try (Watch ignored = configMaps.watch(new ListOptionsBuilder()
        .withResourceVersion(b.getMetadata().getResourceVersion()).build(), recorder)) {
      recorder.awaitLines(3);
      assertThat(recorder.lines()).containsExactly("MODIFIED a", "ADDED c", "DELETED b");
      // a deletion carries a resourceVersion of its own, after the deleted object's last one
      assertThat(rv(recorder.events.get(2).object())).isGreaterThan(rv(recorder.events.get(1).object()));
    }
  }

  @Test
  void watchFromZeroSendsTheCurrentStateThenLiveEvents() {
    configMap("a", "1");
    configMap("b", "1");
    Recorder<ConfigMap> recorder = new Recorder<>();
    try (Watch ignored = cluster.client.configMaps().inNamespace(cluster.namespace)
        .watch(new ListOptionsBuilder().withResourceVersion("0").build(), recorder)) {
      recorder.awaitLines(2);
      configMap("c", "1");
      recorder.awaitLines(3);
      assertThat(recorder.lines().subList(0, 2)).containsExactlyInAnyOrder("ADDED a", "ADDED b");
      assertThat(recorder.lines().get(2)).isEqualTo("ADDED c");
    }
  }

  @Test
  void sendInitialEventsEndsWithAnAnnotatedBookmark() {
    configMap("a", "1");
    ConfigMap b = configMap("b", "1");
    Recorder<ConfigMap> recorder = new Recorder<>();
    try (Watch ignored = cluster.client.configMaps().inNamespace(cluster.namespace)
        .watch(new ListOptionsBuilder().withSendInitialEvents(true).withResourceVersionMatch("NotOlderThan")
            .withAllowWatchBookmarks(true).build(), recorder)) {
      await().atMost(Duration.ofSeconds(30)).until(() -> !recorder.bookmarks().isEmpty());
      assertThat(recorder.lines()).containsExactlyInAnyOrder("ADDED a", "ADDED b");
      ConfigMap bookmark = recorder.bookmarks().get(0).object();
      assertThat(bookmark.getMetadata().getAnnotations()).containsEntry("k8s.io/initial-events-end", "true");
      assertThat(rv(bookmark)).isGreaterThanOrEqualTo(rv(b));
      // the bookmark comes after every initial event
      assertThat(recorder.events.get(2).action()).isEqualTo(Action.BOOKMARK);
    }
  }

  @Test
  void sendInitialEventsWithoutNotOlderThanIsInvalid() {
    assertThatThrownBy(() -> cluster.client.configMaps().inNamespace(cluster.namespace)
        .watch(new ListOptionsBuilder().withSendInitialEvents(true).withAllowWatchBookmarks(true).build(),
            new Recorder<>()))
        .isInstanceOfSatisfying(KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(422));
  }

  @Test
  void generateNameAddsAFiveCharacterSuffix() {
    ConfigMap created = cluster.client.configMaps().inNamespace(cluster.namespace).resource(new ConfigMapBuilder()
        .withNewMetadata().withGenerateName("node-1-driver-").endMetadata().build()).create();
    assertThat(created.getMetadata().getName()).matches("node-1-driver-[a-z0-9]{5}");
  }

  @Test
  void anUpdateWithAStaleResourceVersionConflicts() {
    ConfigMap stale = configMap("a", "1");
    cluster.client.configMaps().inNamespace(cluster.namespace).withName("a")
        .edit(c -> new ConfigMapBuilder(c).addToData("k", "2").build());

    assertThatThrownBy(() -> cluster.client.configMaps().inNamespace(cluster.namespace)
        .resource(new ConfigMapBuilder(stale).addToData("k", "3").build()).update())
        .isInstanceOfSatisfying(KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(409));
    assertThat(cluster.client.configMaps().inNamespace(cluster.namespace).withName("a").get().getData())
        .containsEntry("k", "2");
  }

  @Test
  void deletePreconditionsOnResourceVersionAreEnforced() {
    ConfigMap stale = configMap("a", "1");
    var configMaps = cluster.client.configMaps().inNamespace(cluster.namespace);
    configMaps.withName("a").edit(c -> new ConfigMapBuilder(c).addToData("k", "2").build());

    assertThatThrownBy(() -> configMaps.withName("a").lockResourceVersion(stale.getMetadata().getResourceVersion())
        .delete())
        .isInstanceOfSatisfying(KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(409));
    assertThat(configMaps.withName("a").get()).isNotNull();

    String current = configMaps.withName("a").get().getMetadata().getResourceVersion();
    configMaps.withName("a").lockResourceVersion(current).delete();
    await().atMost(Duration.ofSeconds(30)).until(() -> configMaps.withName("a").get() == null);
  }

  @Test
  void anInformerListsWatchesAndFollowsChanges() {
    configMap("a", "1");
    List<String> seen = new CopyOnWriteArrayList<>();
    var configMaps = cluster.client.configMaps().inNamespace(cluster.namespace);
    SharedIndexInformer<ConfigMap> informer = configMaps.withField("metadata.name", "a")
        .inform(new ResourceEventHandler<>() {
          @Override
          public void onAdd(ConfigMap obj) {
            seen.add("add " + obj.getData().get("k"));
          }

          @Override
          public void onUpdate(ConfigMap oldObj, ConfigMap newObj) {
            seen.add("update " + newObj.getData().get("k"));
          }

          @Override
          public void onDelete(ConfigMap obj, boolean deletedFinalStateUnknown) {
            seen.add("delete");
          }
        });
    try {
      configMap("b", "ignored");
      configMaps.withName("a").edit(c -> new ConfigMapBuilder(c).addToData("k", "2").build());
      configMaps.withName("a").delete();
      await().atMost(Duration.ofSeconds(30)).until(() -> seen.contains("delete"));
      assertThat(seen).containsExactly("add 1", "update 2", "delete");
    } finally {
      informer.close();
    }
  }
  @Test
  void mergePatchRemovesNullKeysAndReplacesLists() {
    cluster.client.configMaps().inNamespace(cluster.namespace).resource(new ConfigMapBuilder()
        .withNewMetadata().withName("m").withFinalizers("a.example.com/x").endMetadata()
        .addToData("keep", "1").addToData("drop", "2").build()).create();
    ConfigMap patched = cluster.client.configMaps().inNamespace(cluster.namespace).withName("m")
        .patch(PatchContext.of(PatchType.JSON_MERGE), "{\"data\":{\"drop\":null},\"metadata\":{\"finalizers\":"
            + "[\"b.example.com/y\"]}}");
    assertThat(patched.getData()).containsExactly(Map.entry("keep", "1"));
    assertThat(patched.getMetadata().getFinalizers()).containsExactly("b.example.com/y");
    cluster.client.configMaps().inNamespace(cluster.namespace).withName("m")
        .patch(PatchContext.of(PatchType.JSON_MERGE), "{\"metadata\":{\"finalizers\":null}}");
  }

  @Test
  void strategicMergePatchMergesContainersByName() {
    cluster.client.pods().inNamespace(cluster.namespace).resource(new PodBuilder()
        .withNewMetadata().withName("smp").endMetadata()
        .withNewSpec().addNewContainer().withName("a").withImage("busybox:1").endContainer()
        .addNewContainer().withName("b").withImage("busybox:1").endContainer().endSpec().build()).create();
    Pod patched = cluster.client.pods().inNamespace(cluster.namespace).withName("smp")
        .patch(PatchContext.of(PatchType.STRATEGIC_MERGE),
            "{\"spec\":{\"containers\":[{\"name\":\"b\",\"image\":\"busybox:2\"}]}}");
    assertThat(patched.getSpec().getContainers()).extracting(c -> c.getName() + "=" + c.getImage())
        .containsExactly("a=busybox:1", "b=busybox:2");
  }

  @Test
  void secretStringDataIsFoldedIntoDataAndTheTypeDefaults() {
    Secret secret = cluster.client.secrets().inNamespace(cluster.namespace).resource(new SecretBuilder()
        .withNewMetadata().withName("s").endMetadata().addToStringData("user", "admin").build()).create();
    assertThat(secret.getType()).isEqualTo("Opaque");
    assertThat(secret.getStringData()).isNullOrEmpty();
    assertThat(secret.getData()).containsEntry("user", "YWRtaW4=");
  }

  @Test
  void generationMovesOnSpecChangesOnly() {
    ResourceSlice created = slice("gen", "node-a", "gpu.example.com");
    assertThat(created.getMetadata().getGeneration()).isEqualTo(1L);
    var resource = cluster.client.resources(ResourceSlice.class).withName(created.getMetadata().getName());
    ResourceSlice labelled = resource.edit(s -> new ResourceSliceBuilder(s).editMetadata().addToLabels("a", "b")
        .endMetadata().build());
    assertThat(labelled.getMetadata().getGeneration()).isEqualTo(1L);
    ResourceSlice changed = resource.edit(s -> new ResourceSliceBuilder(s).editSpec().editPool().withGeneration(2L)
        .endPool().endSpec().build());
    assertThat(changed.getMetadata().getGeneration()).isEqualTo(2L);
    resource.delete();
  }

  @Test
  void serverSideApplyTracksManagersAndConflicts() {
    var configMaps = cluster.client.configMaps().inNamespace(cluster.namespace);
    ConfigMap applied = configMaps.resource(new ConfigMapBuilder().withNewMetadata().withName("ssa").endMetadata()
        .addToData("owner", "alice").build()).fieldManager("alice").serverSideApply();
    assertThat(applied.getMetadata().getManagedFields()).extracting(m -> m.getManager() + "/" + m.getOperation())
        .containsExactly("alice/Apply");
    ConfigMap bob = new ConfigMapBuilder().withNewMetadata().withName("ssa").endMetadata()
        .addToData("owner", "bob").build();
    assertThatThrownBy(() -> configMaps.resource(bob).fieldManager("bob").serverSideApply())
        .isInstanceOfSatisfying(KubernetesClientException.class, e -> {
          assertThat(e.getCode()).isEqualTo(409);
          assertThat(e.getStatus().getMessage()).contains("conflict with \"alice\"", ".data.owner");
        });
    ConfigMap forced = configMaps.resource(bob).fieldManager("bob").forceConflicts().serverSideApply();
    assertThat(forced.getData()).containsEntry("owner", "bob");
  }

  @Test
  void everyWriteRecordsItsManagerAndAnApplyConflictsWithIt() {
    var configMaps = cluster.client.configMaps().inNamespace(cluster.namespace);
    configMap("owned", "created");
    ConfigMap patched = configMaps.withName("owned").patch(new PatchContext.Builder()
        .withPatchType(PatchType.JSON_MERGE).withFieldManager("patcher").build(), "{\"data\":{\"extra\":\"1\"}}");
    assertThat(patched.getMetadata().getManagedFields())
        .extracting(m -> m.getManager() + "/" + m.getOperation() + "/" + m.getFieldsV1().getAdditionalProperties())
        .containsExactly("fabric8-kubernetes-client/Update/{f:data={f:k={}}}",
            "patcher/Update/{f:data={f:extra={}}}");
    ConfigMap applied = new ConfigMapBuilder().withNewMetadata().withName("owned").endMetadata()
        .addToData("k", "applied").build();
    assertThatThrownBy(() -> configMaps.resource(applied).fieldManager("alice").serverSideApply())
        .isInstanceOfSatisfying(KubernetesClientException.class, e -> {
          assertThat(e.getCode()).isEqualTo(409);
          assertThat(e.getStatus().getMessage()).isEqualTo("Apply failed with 1 conflict: conflict with "
              + "\"fabric8-kubernetes-client\" using v1: .data.k");
        });
    // the same value is no conflict: both own it
    ConfigMap same = configMaps.resource(new ConfigMapBuilder().withNewMetadata().withName("owned").endMetadata()
        .addToData("extra", "1").build()).fieldManager("alice").serverSideApply();
    assertThat(same.getMetadata().getManagedFields()).extracting(m -> m.getManager())
        .containsExactly("fabric8-kubernetes-client", "patcher", "alice");
  }

  @Test
  void dryRunStoresNothing() {
    ConfigMap dry = cluster.client.configMaps().inNamespace(cluster.namespace).resource(new ConfigMapBuilder()
        .withNewMetadata().withName("dry").endMetadata().addToData("k", "v").build()).dryRun().create();
    assertThat(dry.getData()).containsEntry("k", "v");
    assertThat(dry.getMetadata().getResourceVersion()).as("a dry run gives out no resourceVersion").isNull();
    assertThat(cluster.client.configMaps().inNamespace(cluster.namespace).withName("dry").get()).isNull();
    ConfigMap kept = configMap("kept", "v");
    cluster.client.configMaps().inNamespace(cluster.namespace).withName("kept").dryRun().delete();
    ConfigMap after = cluster.client.configMaps().inNamespace(cluster.namespace).withName("kept").get();
    assertThat(after).as("a dry-run delete deletes nothing").isNotNull();
    assertThat(after.getMetadata().getResourceVersion()).isEqualTo(kept.getMetadata().getResourceVersion());
  }

  @Test
  void configMapsAndSecretsOverOneMebibyteAreInvalid() {
    String mebibyte = "x".repeat(1024 * 1024);
    ConfigMap full = cluster.client.configMaps().inNamespace(cluster.namespace).resource(new ConfigMapBuilder()
        .withNewMetadata().withName("full").endMetadata().addToData("k", mebibyte).build()).create();
    assertThat(full.getData().get("k")).hasSize(1024 * 1024);
    assertThatThrownBy(() -> cluster.client.configMaps().inNamespace(cluster.namespace).resource(
        new ConfigMapBuilder().withNewMetadata().withName("over").endMetadata().addToData("k", mebibyte)
            .addToBinaryData("b", "eA==").build()).create())
        .isInstanceOfSatisfying(KubernetesClientException.class, e -> {
          assertThat(e.getCode()).isEqualTo(422);
          assertThat(e.getStatus().getReason()).isEqualTo("Invalid");
          assertThat(e.getStatus().getMessage()).isEqualTo(
              "ConfigMap \"over\" is invalid: []: Too long: must have at most 1048576 bytes");
        });
    assertThatThrownBy(() -> cluster.client.configMaps().inNamespace(cluster.namespace).withName("full")
        .edit(cm -> new ConfigMapBuilder(cm).addToData("more", "x").build()))
        .isInstanceOfSatisfying(KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(422));
    assertThatThrownBy(() -> cluster.client.secrets().inNamespace(cluster.namespace).resource(new SecretBuilder()
        .withNewMetadata().withName("over").endMetadata().addToStringData("a", mebibyte)
        .addToStringData("b", "x").build()).create())
        .isInstanceOfSatisfying(KubernetesClientException.class, e -> {
          assertThat(e.getCode()).isEqualTo(422);
          assertThat(e.getStatus().getMessage()).isEqualTo(
              "Secret \"over\" is invalid: data: Too long: must have at most 1048576 bytes");
          assertThat(e.getStatus().getDetails().getCauses()).singleElement()
              .satisfies(c -> assertThat(c.getField()).isEqualTo("data"));
        });
    assertThat(cluster.client.secrets().inNamespace(cluster.namespace).withName("over").get()).isNull();
  }

  @Test
  void theBuiltInNamespacesExist() {
    assertThat(names(cluster.client.namespaces().list().getItems())).contains("default", "kube-system",
        "kube-public", "kube-node-lease");
  }

  @Test
  void aNameTheApiServerRefusesIsInvalid() {
    assertThatThrownBy(() -> configMap("Not_A_Name", "v"))
        .isInstanceOfSatisfying(KubernetesClientException.class, e -> {
          assertThat(e.getCode()).isEqualTo(422);
          assertThat(e.getStatus().getReason()).isEqualTo("Invalid");
        });
  }
}
