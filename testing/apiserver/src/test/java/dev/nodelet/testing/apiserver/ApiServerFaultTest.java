package dev.nodelet.testing.apiserver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** What only the embedded API server can do: bounded history, bookmark timing, fault injection, observation. */
class ApiServerFaultTest {

  private TestCluster cluster;

  @BeforeAll
  static void embeddedOnly() {
    assumeFalse(TestCluster.isReal(), "fault injection needs the embedded API server");
  }

  private TestCluster start(UnaryOperator<EmbeddedApiServer.Builder> server) {
    return start(server, c -> c);
  }

  private TestCluster start(UnaryOperator<EmbeddedApiServer.Builder> server, UnaryOperator<Config> config) {
    cluster = TestCluster.start(server, config);
    return cluster;
  }

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private ConfigMap configMap(KubernetesClient client, String name, String value) {
    return client.configMaps().inNamespace("test").resource(new ConfigMapBuilder()
        .withNewMetadata().withName(name).endMetadata().addToData("k", value).build()).createOr(e -> e.update());
  }

  @Test
  void aWatchFromBeforeTheHistoryGetsGone() {
    start(b -> b.historySize(3));
    ConfigMap first = configMap(cluster.client, "a", "1");
    for (int i = 0; i < 4; i++) {
      configMap(cluster.client, "b" + i, "1");
    }
    Recorder<ConfigMap> tooOld = new Recorder<>();
    cluster.client.configMaps().inNamespace("test")
        .watch(new ListOptionsBuilder().withResourceVersion(first.getMetadata().getResourceVersion()).build(),
            tooOld);
    await().atMost(Duration.ofSeconds(30)).until(() -> tooOld.closed);
    assertThat(tooOld.closedWith.get()).isNotNull();
    assertThat(tooOld.closedWith.get().isHttpGone()).isTrue();
    assertThat(tooOld.closedWith.get().getMessage()).contains("too old resource version");
    assertThat(tooOld.lines()).isEmpty();

    // the last three events are still there
    Recorder<ConfigMap> recent = new Recorder<>();
    String b0 = cluster.client.configMaps().inNamespace("test").withName("b0").get().getMetadata()
        .getResourceVersion();
    try (Watch ignored = cluster.client.configMaps().inNamespace("test")
        .watch(new ListOptionsBuilder().withResourceVersion(b0).build(), recent)) {
      recent.awaitLines(3);
      assertThat(recent.lines()).containsExactly("ADDED b1", "ADDED b2", "ADDED b3");
    }
  }

  @Test
  void anInformerRelistsAfterGoneAndEndsUpCurrent() {
    start(b -> b.historySize(2), c -> new ConfigBuilder(c).withWatchReconnectInterval(50).build());
    configMap(cluster.client, "keep", "1");
    configMap(cluster.client, "drop", "1");
    SharedIndexInformer<ConfigMap> informer = cluster.client.configMaps().inNamespace("test").inform();
    try {
      await().atMost(Duration.ofSeconds(30)).until(() -> informer.getStore().list().size() == 2);
      long lists = cluster.server.requestCount(Verb.LIST, "configmaps");
      // while the informer cannot watch, more happens than the history holds
      cluster.server.failNext(Verb.WATCH, "configmaps", Integer.MAX_VALUE, 500);
      cluster.server.cutWatches();
      cluster.client.configMaps().inNamespace("test").withName("drop").delete();
      for (int i = 0; i < 5; i++) {
        configMap(cluster.client, "new" + i, "1");
      }
      configMap(cluster.client, "keep", "2");
      cluster.server.clearFailures();
      await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
        Set<String> names = informer.getStore().list().stream().map(c -> c.getMetadata().getName())
            .collect(Collectors.toSet());
        assertThat(names).containsExactlyInAnyOrder("keep", "new0", "new1", "new2", "new3", "new4");
        assertThat(informer.getStore().getByKey("test/keep").getData()).containsEntry("k", "2");
      });
      // it could only get there by listing again: its resourceVersion had left the history (410 Gone)
      assertThat(cluster.server.requestCount(Verb.LIST, "configmaps")).isGreaterThan(lists);
    } finally {
      informer.close();
    }
  }

  @Test
  void bookmarksArriveAtTheConfiguredIntervalWithTheCurrentResourceVersion() {
    start(b -> b.bookmarkInterval(Duration.ofMillis(100)));
    ConfigMap a = configMap(cluster.client, "a", "1");
    Recorder<ConfigMap> recorder = new Recorder<>();
    Recorder<ConfigMap> without = new Recorder<>();
    try (Watch ignored = cluster.client.configMaps().inNamespace("test")
        .watch(new ListOptionsBuilder().withAllowWatchBookmarks(true).withResourceVersion(
            a.getMetadata().getResourceVersion()).build(), recorder)) {
      await().atMost(Duration.ofSeconds(20)).until(() -> recorder.bookmarks().size() >= 2);
      ConfigMap bookmark = recorder.bookmarks().get(0).object();
      assertThat(bookmark.getMetadata().getResourceVersion()).isEqualTo(a.getMetadata().getResourceVersion());
      assertThat(bookmark.getMetadata().getAnnotations()).doesNotContainKey("k8s.io/initial-events-end");

      try (Watch alsoIgnored = cluster.client.configMaps().inNamespace("test").watch(without)) {
        without.awaitLines(1); // its ADDED of "a": the server holds the watch now
        // two more bookmarks for the watch that asked for them: the timer went off at least once for both
        int seen = recorder.bookmarks().size();
        await().atMost(Duration.ofSeconds(20)).until(() -> recorder.bookmarks().size() >= seen + 2);
        // a watch sends in order: a bookmark sent to the other watch before this change arrives before it
        configMap(cluster.client, "b", "1");
        without.awaitLines(2);
        assertThat(without.bookmarks()).isEmpty();
      }
    }
  }

  @Test
  void aWatchStreamsOverPlainHttpToo() throws Exception {
    start(b -> b, c -> new ConfigBuilder(c).withOnlyHttpWatches(true).build());
    Recorder<ConfigMap> recorder = new Recorder<>();
    try (Watch ignored = cluster.client.configMaps().inNamespace("test").watch(recorder)) {
      await().atMost(Duration.ofSeconds(20)).until(() -> cluster.server.openWatches("configmaps") == 1);
      configMap(cluster.client, "a", "1");
      configMap(cluster.client, "a", "2");
      cluster.client.configMaps().inNamespace("test").withName("a").delete();
      recorder.awaitLines(3);
      assertThat(recorder.lines()).containsExactly("ADDED a", "MODIFIED a", "DELETED a");
    }
    await().atMost(Duration.ofSeconds(20)).until(() -> cluster.server.openWatches("configmaps") == 0);

    // and as the raw protocol: one JSON event per line
    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    HttpResponse<InputStream> response = http.send(HttpRequest.newBuilder(URI.create(
        cluster.server.url() + "/api/v1/namespaces/test/configmaps?watch=true&resourceVersion=0")).build(),
        HttpResponse.BodyHandlers.ofInputStream());
    assertThat(response.statusCode()).isEqualTo(200);
    configMap(cluster.client, "b", "1");
    try (BufferedReader lines = new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
      assertThat(lines.readLine()).startsWith("{\"type\":\"ADDED\",\"object\":{").contains("\"name\":\"b\"");
    }
  }

  @Test
  void aDeleteWithAWrongUidPreconditionConflicts() throws Exception {
    start(b -> b);
    ConfigMap a = configMap(cluster.client, "a", "1");
    HttpClient http = HttpClient.newHttpClient();
    URI uri = URI.create(cluster.server.url() + "/api/v1/namespaces/test/configmaps/a");
    HttpResponse<String> wrong = http.send(HttpRequest.newBuilder(uri).header("Content-Type", "application/json")
        .method("DELETE", HttpRequest.BodyPublishers.ofString(
            "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\",\"preconditions\":{\"uid\":\"not-the-uid\"}}"))
        .build(), HttpResponse.BodyHandlers.ofString());
    assertThat(wrong.statusCode()).isEqualTo(409);
    assertThat(wrong.body()).contains("Precondition failed: UID in precondition: not-the-uid");
    assertThat(cluster.client.configMaps().inNamespace("test").withName("a").get()).isNotNull();

    HttpResponse<String> right = http.send(HttpRequest.newBuilder(uri).header("Content-Type", "application/json")
        .method("DELETE", HttpRequest.BodyPublishers.ofString("{\"preconditions\":{\"uid\":\""
            + a.getMetadata().getUid() + "\"}}"))
        .build(), HttpResponse.BodyHandlers.ofString());
    assertThat(right.statusCode()).isEqualTo(200);
    assertThat(cluster.client.configMaps().inNamespace("test").withName("a").get()).isNull();
  }

  @Test
  void aWatchEndsAtItsTimeout() throws Exception {
    start(b -> b);
    HttpResponse<InputStream> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(
        cluster.server.url() + "/api/v1/namespaces/test/configmaps?watch=true&timeoutSeconds=1")).build(),
        HttpResponse.BodyHandlers.ofInputStream());
    long started = System.nanoTime();
    try (InputStream body = response.body()) {
      assertThat(body.readAllBytes()).isEmpty(); // returns when the server ends the stream
    }
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)).isGreaterThanOrEqualTo(500L);
    assertThat(cluster.server.openWatches("configmaps")).isZero();
  }

  @Test
  void stopAndStartKeepTheStateAndThePort() {
    start(b -> b);
    ConfigMap a = configMap(cluster.client, "a", "1");
    int port = cluster.server.port();

    cluster.server.stop();
    assertThat(cluster.server.isRunning()).isFalse();
    assertThatThrownBy(() -> cluster.client.configMaps().inNamespace("test").withName("a").get())
        .isInstanceOf(KubernetesClientException.class);

    cluster.server.start();
    assertThat(cluster.server.port()).isEqualTo(port);
    assertThat(cluster.client.configMaps().inNamespace("test").withName("a").get().getMetadata()
        .getResourceVersion()).isEqualTo(a.getMetadata().getResourceVersion());
    assertThat(Long.parseLong(configMap(cluster.client, "b", "1").getMetadata().getResourceVersion()))
        .isGreaterThan(Long.parseLong(a.getMetadata().getResourceVersion()));
  }

  @Test
  void aWatchResumesAfterTheServerComesBack() {
    start(b -> b);
    Recorder<ConfigMap> recorder = new Recorder<>();
    try (Watch ignored = cluster.client.configMaps().inNamespace("test").watch(recorder)) {
      configMap(cluster.client, "a", "1");
      recorder.awaitLines(1);
      cluster.server.stop();
      cluster.server.start();
      await().atMost(Duration.ofSeconds(20)).until(() -> cluster.server.openWatches("configmaps") == 1);
      configMap(cluster.client, "b", "1");
      recorder.awaitLines(2);
      assertThat(recorder.lines()).containsExactly("ADDED a", "ADDED b");
    }
  }

  @Test
  void cutWatchesAreResumedWithoutLosingEvents() {
    start(b -> b);
    Recorder<ConfigMap> recorder = new Recorder<>();
    try (Watch ignored = cluster.client.configMaps().inNamespace("test").watch(recorder)) {
      configMap(cluster.client, "a", "1");
      recorder.awaitLines(1);
      cluster.server.cutWatches();
      assertThat(cluster.server.openWatches("configmaps")).isZero();
      configMap(cluster.client, "b", "1"); // while no watch is open
      recorder.awaitLines(2);
      assertThat(recorder.lines()).containsExactly("ADDED a", "ADDED b");
      await().atMost(Duration.ofSeconds(30)).until(() -> cluster.server.openWatches("configmaps") == 1);
    }
  }

  @Test
  void failNextFailsExactlyThatManyRequestsOfThatKind() {
    start(b -> b);
    configMap(cluster.client, "a", "1");
    cluster.server.failNext(Verb.GET, "configmaps", 2, 503);
    var a = cluster.client.configMaps().inNamespace("test").withName("a");

    // other kinds of request are not affected
    assertThat(cluster.client.configMaps().inNamespace("test").list().getItems()).hasSize(1);
    for (int i = 0; i < 2; i++) {
      assertThatThrownBy(a::get).isInstanceOfSatisfying(KubernetesClientException.class,
          e -> assertThat(e.getCode()).isEqualTo(503));
    }
    assertThat(a.get().getData()).containsEntry("k", "1");

    cluster.server.failNext(Verb.GET, "configmaps", 5, 500);
    cluster.server.clearFailures();
    assertThat(a.get().getData()).containsEntry("k", "1");
  }

  @Test
  void responsesCanBeDelayed() {
    start(b -> b);
    configMap(cluster.client, "a", "1");
    cluster.server.delayResponses(Duration.ofMillis(300));
    long started = System.nanoTime();
    cluster.client.configMaps().inNamespace("test").withName("a").get();
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)).isGreaterThanOrEqualTo(300);
    cluster.server.delayResponses(Duration.ZERO);
  }

  @Test
  void openWatchesAreCountedPerResourceAndFieldSelector() throws Exception {
    start(b -> b);
    var configMaps = cluster.client.configMaps().inNamespace("test");
    Watch w1 = configMaps.withField("metadata.name", "a").watch(new Recorder<>());
    Watch w2 = configMaps.withField("metadata.name", "a").watch(new Recorder<>());
    Watch w3 = configMaps.withField("metadata.name", "b").watch(new Recorder<>());
    Watch w4 = cluster.client.pods().inNamespace("test").watch(new Recorder<>());
    await().atMost(Duration.ofSeconds(20)).until(() -> cluster.server.openWatches("configmaps") == 3);
    assertThat(cluster.server.openWatches("configmaps", "metadata.name=a")).isEqualTo(2);
    assertThat(cluster.server.openWatches("configmaps", "metadata.name=b")).isEqualTo(1);
    assertThat(cluster.server.openWatches("pods")).isEqualTo(1);
    // the same figures over HTTP, for tests that run in another process
    HttpClient http = HttpClient.newHttpClient();
    String url = cluster.server.url() + "/nodelet-testing/watches?resource=configmaps&fieldSelector=metadata.name%3Da";
    assertThat(http.send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString())
        .body()).isEqualTo("{\"count\":2}");
    w1.close();
    w3.close();
    await().atMost(Duration.ofSeconds(20)).until(() -> cluster.server.openWatches("configmaps") == 1);
    assertThat(cluster.server.openWatches("configmaps", "metadata.name=a")).isEqualTo(1);
    w2.close();
    w4.close();
    await().atMost(Duration.ofSeconds(20)).until(() -> cluster.server.openWatches("configmaps") == 0
        && cluster.server.openWatches("pods") == 0);
  }

  @Test
  void writesAreRecordedWithTheirNodeNameAndReadsAreNot() {
    start(b -> b);
    var slices = cluster.client.resources(ResourceSlice.class);
    ResourceSlice created = slices.resource(new ResourceSliceBuilder()
        .withNewMetadata().withGenerateName("node-1-gpu-").endMetadata()
        .withNewSpec().withNodeName("node-1").withDriver("gpu.example.com")
        .withNewPool().withName("p").withGeneration(1L).withResourceSliceCount(1L).endPool().endSpec()
        .build()).create();
    String name = created.getMetadata().getName();
    slices.withName(name).edit(s -> new ResourceSliceBuilder(s).editSpec().editPool().withGeneration(2L)
        .endPool().endSpec().build());
    slices.list();
    slices.withName(name).get();
    slices.withName(name).delete();
    cluster.client.pods().inNamespace("test").resource(new PodBuilder().withNewMetadata().withName("p")
        .endMetadata().withNewSpec().withNodeName("node-2").endSpec().build()).create();

    List<RecordedWrite> writes = cluster.server.writes();
    assertThat(writes).extracting(RecordedWrite::verb, RecordedWrite::resource, RecordedWrite::name,
        RecordedWrite::nodeName).containsExactly(
            org.assertj.core.groups.Tuple.tuple(Verb.CREATE, "resourceslices", name, "node-1"),
            org.assertj.core.groups.Tuple.tuple(Verb.PATCH, "resourceslices", name, "node-1"),
            org.assertj.core.groups.Tuple.tuple(Verb.DELETE, "resourceslices", name, "node-1"),
            org.assertj.core.groups.Tuple.tuple(Verb.CREATE, "pods", "p", "node-2"));
    assertThat(writes).allMatch(RecordedWrite::succeeded);
    cluster.server.clearWrites();
    slices.list();
    assertThat(cluster.server.writes()).isEmpty();
  }

  @Test
  void aFailedCreateWithGenerateNameIsAnsweredAndRecorded() {
    start(b -> b);
    cluster.server.failNext(Verb.CREATE, "configmaps", 1, 500);
    assertThatThrownBy(() -> cluster.client.configMaps().inNamespace("test").resource(new ConfigMapBuilder()
        .withNewMetadata().withGenerateName("x-").endMetadata().build()).create())
        .isInstanceOfSatisfying(KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(500));
    assertThat(cluster.server.writes()).singleElement().satisfies(w -> {
      assertThat(w.verb()).isEqualTo(Verb.CREATE);
      assertThat(w.name()).isNull();
      assertThat(w.succeeded()).isFalse();
    });
  }

  @Test
  void theServerRejectsABadConfiguration() {
    assertThatThrownBy(() -> EmbeddedApiServer.builder().historySize(0))
        .hasMessageContaining("historySize");
    assertThatThrownBy(() -> EmbeddedApiServer.builder().bookmarkInterval(Duration.ZERO))
        .hasMessageContaining("bookmarkInterval");
    assertThatThrownBy(() -> EmbeddedApiServer.builder().port(70000)).hasMessageContaining("port");
  }

  @Test
  void aTakenPortIsReportedClearly() {
    start(b -> b);
    EmbeddedApiServer second = EmbeddedApiServer.builder().port(cluster.server.port()).build();
    assertThatThrownBy(second::start).hasMessageContaining("cannot listen on");
    assertThat(second.isRunning()).isFalse();
  }

  @Test
  void stoppingLeavesNoServerThreadBehind() {
    Set<Thread> before = Thread.getAllStackTraces().keySet();
    start(b -> b.bookmarkInterval(Duration.ofMillis(50)));
    Watch w = cluster.client.configMaps().inNamespace("test")
        .watch(new ListOptionsBuilder().withAllowWatchBookmarks(true).build(), new Recorder<>());
    await().atMost(Duration.ofSeconds(20)).until(() -> cluster.server.openWatches("configmaps") == 1);
    w.close();
    cluster.close();
    cluster = null;
    await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(Thread.getAllStackTraces().keySet()
        .stream().filter(t -> !before.contains(t)).filter(Thread::isAlive).map(Thread::getName)
        .filter(n -> n.startsWith("vert.x") || n.startsWith("vertx") || n.startsWith("embedded-apiserver")))
        .isEmpty());
  }
}
