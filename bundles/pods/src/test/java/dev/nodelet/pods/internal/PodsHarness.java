package dev.nodelet.pods.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.nodelet.cache.core.ObjectManagers;
import dev.nodelet.cache.core.SwitchableObjectManager;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * The pods' runtime on real parts: the embedded API server, the managers of cache-core on its client, a real Felix
 * with Felix Config Admin, a Maven repository folder; time driven by a {@link MutableClock}. The test plays the pod
 * source: {@link #feed} hands the runtime the pod as the API server has it.
 */
final class PodsHarness implements AutoCloseable {

  static final String NODE = "node-1";

  final EmbeddedApiServer server = EmbeddedApiServer.builder().build().start();
  final KubernetesClient client = server.newClient();
  final SwitchableObjectManager<ConfigMap> configMaps = ObjectManagers.configMaps(client).build();
  final SwitchableObjectManager<Secret> secrets = ObjectManagers.secrets(client).build();
  final MutableClock clock = new MutableClock(Instant.parse("2026-11-28T10:00:00Z"));
  final Path repository;
  final Path work;
  final Path storage;
  Felix felix;
  PodRuntime runtime;
  volatile Object claimStatus; // the claim manager the runtime sees; null: none running
  SecretValues secretValues; // the Secret values' Configuration Admin plugin, as the component registers it
  DeviceServices deviceServices; // the containers' devices as services, as the component registers them

  PodsHarness(Path dir) throws Exception {
    repository = Files.createDirectories(dir.resolve("repository"));
    work = Files.createDirectories(dir.resolve("work"));
    storage = dir.resolve("felix");
    felix = new Felix(storage);
    secretValues = new SecretValues().register(felix.context());
    deviceServices = new DeviceServices(felix.context());
    runtime = newRuntime(110);
  }

  PodRuntime newRuntime(int capacity) {
    return newRuntime(capacity, new KubePodApi(client));
  }

  /** A runtime whose API calls go through {@code api} (a test's view of the real API server). */
  PodRuntime newRuntime(int capacity, PodApi api) {
    return new PodRuntimeBuilder(felix.context(), client, NODE, felix.configurationAdmin)
        .managers(configMaps, secrets).localRepository(repository).work(work).secretValues(secretValues)
        .devices(new PodDevices(() -> claimStatus, new DeviceAttributes.FromSlices(client), deviceServices))
        .api(api).clock(clock).capacity(capacity).build();
  }

  /** Creates the pod in the API server and hands it to the managers and the runtime; waits for the work. */
  Pod run(Pod pod) throws Exception {
    pod.getSpec().setNodeName(NODE);
    Pod created = client.pods().inNamespace("default").resource(pod).create();
    configMaps.registerPod(created);
    secrets.registerPod(created);
    runtime.podUpdated(created);
    idle();
    return created;
  }

  /** Hands the runtime the pod as the API server has it now (as the pod source would) and waits for the work. */
  void feed(String name) throws Exception {
    Pod pod = client.pods().inNamespace("default").withName(name).get();
    runtime.podUpdated(pod);
    idle();
  }

  /** The writes to pods (their status, their deletion), without the events written beside them. */
  List<dev.nodelet.testing.apiserver.RecordedWrite> podWrites() {
    return server.writes().stream().filter(w -> !w.resource().equals("events")).toList();
  }

  void idle() throws Exception {
    assertThat(runtime.awaitIdle(Duration.ofSeconds(30))).isTrue();
  }

  PodStatus status(String name) {
    return client.pods().inNamespace("default").withName(name).get().getStatus();
  }

  ContainerStatus container(String pod, String container) {
    return status(pod).getContainerStatuses().stream().filter(c -> c.getName().equals(container)).findFirst()
        .orElseThrow();
  }

  @Override
  public void close() throws Exception {
    runtime.close();
    secretValues.close();
    deviceServices.close();
    configMaps.close();
    secrets.close();
    felix.close();
    client.close();
    server.close();
  }
}
