package dev.nodelet.itests;

import static org.awaitility.Awaitility.await;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import dev.nodelet.kube.NodeIdentity;
import dev.nodelet.kube.watch.Reflector;
import dev.nodelet.kube.watch.ReflectorListener;
import dev.nodelet.kube.watch.Reflectors;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;
import javax.inject.Inject;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.ExamFactory;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.forked.ForkedTestContainerFactory;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.Bundle;
import org.osgi.framework.Constants;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceEvent;
import org.osgi.framework.ServiceListener;
import org.osgi.framework.ServiceReference;
import org.osgi.service.cm.ConfigurationAdmin;
import org.osgi.service.component.runtime.ServiceComponentRuntime;
import org.osgi.service.component.runtime.dto.ComponentConfigurationDTO;
import org.osgi.service.component.runtime.dto.ComponentDescriptionDTO;

/**
 * The packaged bundles in Apache Felix: a forked framework, so that the test JVM's class path (which holds fabric8
 * for the embedded API server) cannot leak into it.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
@ExamFactory(ForkedTestContainerFactory.class)
public class FelixKubeIT extends NodeletTestSupport {

  /** fabric8's own DS component: present in its bundle, deliberately left without its configuration. */
  private static final String FABRIC8_COMPONENT = "io.fabric8.kubernetes.client.osgi.ManagedKubernetesClient";
  private static final String NODE_API_COMPONENT = "dev.nodelet.node.api.internal.NodeApiComponent";

  /**
   * Threads of a fabric8 client: Nodelet's task pool and Jetty's I/O threads and timer ({@code nodelet-kube-}), the
   * JDK client's selector and fabric8's HTTP executor and shared scheduler (with {@code http2.enabled=false}), Jetty's
   * own default names; the rest catches other clients that should not be there.
   */
  private static final Pattern CLIENT_THREAD = Pattern.compile(
      "nodelet-kube-.*|nodelet-reflector-.*|HttpClient-\\d+-.*|JdkHttpClientFactory-.*|CachedSingleThreadScheduler-.*"
          + "|(HttpClient|WebSocketClient)@.*|qtp\\d+-.*|Scheduler-\\d+.*"
          + "|(?i).*(okhttp|fabric8|informer|vert\\.x|jetty).*");

  /** A configuration property that tells one configuration update from the next. */
  private static final String GENERATION_PROPERTY = "nodelet.itest.generation";


  @Inject
  private ServiceComponentRuntime scr;

  @Configuration
  public Option[] configuration() {
    return felixOptions();
  }

  private static String nodeFilter() {
    return "(" + NodeIdentity.NODE_NAME_PROPERTY + "=" + NODE_NAME + ")";
  }

  private void configureForApiServer() throws Exception {
    configureKube(Map.of("master.url", System.getProperty(API_SERVER_URL_PROPERTY), "node.name", NODE_NAME));
  }

  @Test
  public void everyBundleIsActiveAndEveryComponentSatisfied() {
    List<String> notActive = new ArrayList<>();
    for (Bundle bundle : bundleContext.getBundles()) {
      boolean fragment = bundle.getHeaders().get(Constants.FRAGMENT_HOST) != null;
      if (bundle.getState() != (fragment ? Bundle.RESOLVED : Bundle.ACTIVE)) {
        notActive.add(bundle.getSymbolicName() + " " + bundle.getVersion() + " state " + bundle.getState());
      }
    }
    assertEquals("bundles not active", List.of(), notActive);

    List<String> unsatisfied = new ArrayList<>();
    boolean kubeComponentActive = false;
    for (ComponentDescriptionDTO description : scr.getComponentDescriptionDTOs()) {
      for (ComponentConfigurationDTO configuration : scr.getComponentConfigurationDTOs(description)) {
        boolean waitsForItsConfiguration = description.name.equals(FABRIC8_COMPONENT)
            && configuration.state == ComponentConfigurationDTO.UNSATISFIED_CONFIGURATION;
        // the node's API runs in node mode only, which is off here: it waits for the registered node
        // (its one mandatory reference is the RegisteredNode service)
        boolean waitsForNodeMode = description.name.equals(NODE_API_COMPONENT)
            && configuration.state == ComponentConfigurationDTO.UNSATISFIED_REFERENCE;
        waitsForItsConfiguration |= waitsForNodeMode;
        if (configuration.state != ComponentConfigurationDTO.ACTIVE
            && configuration.state != ComponentConfigurationDTO.SATISFIED && !waitsForItsConfiguration) {
          unsatisfied.add(description.name + " state " + configuration.state);
        }
        kubeComponentActive |= description.bundle.symbolicName.equals(KUBE_BUNDLE)
            && configuration.state == ComponentConfigurationDTO.ACTIVE;
      }
    }
    assertEquals("components not satisfied", List.of(), unsatisfied);
    assertTrue("the nodelet-kube component is active", kubeComponentActive);
  }

  @Test
  public void clientReachesTheApiServerAndIdentityFollowsTheNode() throws Exception {
    configureForApiServer();

    try (Tracked<KubernetesClient> tracked = track(KubernetesClient.class, nodeFilter());
        Tracked<NodeIdentity> identity = track(NodeIdentity.class, nodeFilter())) {
      KubernetesClient client = tracked.await();
      // written by the test JVM before the framework started: this is the same server
      ConfigMap seeded = client.configMaps().inNamespace("default").withName(SEEDED_CONFIGMAP).get();
      assertEquals(SEEDED_VALUE, seeded.getData().get(SEEDED_KEY));

      client.configMaps().inNamespace("default").resource(new ConfigMapBuilder()
          .withNewMetadata().withName("written-in-felix").endMetadata()
          .withData(Map.of("framework", "felix"))
          .build()).create();
      assertEquals("felix",
          client.configMaps().inNamespace("default").withName("written-in-felix").get().getData().get("framework"));

      assertEquals(NODE_NAME, identity.await().nodeName());
      String expectedUid = System.getProperty(NODE_UID_PROPERTY);
      await().atMost(WAIT).until(() -> identity.await().nodeUid(), Optional.of(expectedUid)::equals);
    }
  }

  private static final String HEALTH_CHECK = "org.apache.felix.hc.api.HealthCheck";

  @Test
  public void reflectorsFollowObjectsAndTheirWatchesEndWithTheBundle() throws Exception {
    configureForApiServer();
    String selector = "metadata.name=" + SEEDED_CONFIGMAP;
    try (Tracked<Reflectors> reflectors = track(Reflectors.class, nodeFilter())) {
      Reflector<ConfigMap> reflector = reflectors.await().reflector(ConfigMap.class).namespace("default")
          .fieldSelector(selector).listener(new ReflectorListener<>() { }).start();
      await().atMost(WAIT).until(reflector::isSynced);
      assertEquals(SEEDED_VALUE, reflector.get("default", SEEDED_CONFIGMAP).orElseThrow().getData().get(SEEDED_KEY));
      await().atMost(WAIT).until(() -> openWatches("configmaps", selector) == 1);

      // the reflector belongs to the service: stopping the bundle ends its watch and threads, not only its own
      Bundle kube = kubeBundle();
      kube.stop();
      try {
        assertTrue("closed with its bundle", !reflector.isSynced());
        await().atMost(WAIT).until(() -> openWatches("configmaps", selector) == 0);
        // a pool ends its last worker just after its termination is seen
        await().atMost(WAIT).until(() -> clientThreads().stream().noneMatch(name -> name.startsWith("nodelet-reflector-")));
      } finally {
        kube.start();
      }
    }
  }

  /**
   * Open watches on the embedded API server (in the test JVM), through its HTTP view; a URL connection, so that no
   * HTTP client thread of the test counts as one of the bundle's.
   */
  private static int openWatches(String resource, String fieldSelector) throws Exception {
    URI uri = URI.create(System.getProperty(API_SERVER_URL_PROPERTY) + "/nodelet-testing/watches?resource="
        + resource + "&fieldSelector=" + URLEncoder.encode(fieldSelector, StandardCharsets.UTF_8));
    try (InputStream body = uri.toURL().openStream()) {
      return Integer.parseInt(new String(body.readAllBytes(), StandardCharsets.UTF_8).replaceAll("\\D", ""));
    }
  }

  @Test
  public void anInvalidConfigurationChangeKeepsTheClientOfTheLastGoodOne() throws Exception {
    configureForApiServer();
    // the component registers its metrics and health checks with the client
    await().atMost(WAIT).until(this::kubeServices,
        s -> s.containsAll(List.of(KUBERNETES_CLIENT, NodeIdentity.class.getName(), HEALTH_CHECK)));
    Set<String> registered = kubeServices();
    AtomicInteger clientRegistrations = new AtomicInteger();
    ServiceListener counter = event -> {
      if (event.getType() == ServiceEvent.REGISTERED) {
        clientRegistrations.incrementAndGet();
      }
    };
    bundleContext.addServiceListener(counter, "(" + Constants.OBJECTCLASS + "=" + KUBERNETES_CLIENT + ")");
    try {
      offerRefusedKubeConfiguration(Map.of("master.url", "not a url", "node.name", NODE_NAME));
      offerRefusedKubeConfiguration(Map.of("master.url", System.getProperty(API_SERVER_URL_PROPERTY),
          "request.timeout", -1));
      try (Tracked<KubernetesClient> client = track(KubernetesClient.class, nodeFilter())) {
        assertEquals(SEEDED_VALUE, client.await().configMaps().inNamespace("default").withName(SEEDED_CONFIGMAP)
            .get().getData().get(SEEDED_KEY));
      }
      // a valid configuration after the two refused ones: once it is in service, the refused ones were taken, and
      // the client of the last good configuration was replaced only for the valid one
      configureForApiServer();
      assertEquals(1, clientRegistrations.get());
      assertEquals(registered, kubeServices());
    } finally {
      bundleContext.removeServiceListener(counter);
    }
  }

  @Test
  public void stoppingTheBundleEndsEveryClientThread() throws Exception {
    configureForApiServer();
    try (Tracked<NodeIdentity> identity = track(NodeIdentity.class, nodeFilter())) {
      // a UID means the informer has listed through the client: its threads exist
      await().atMost(WAIT).until(() -> identity.await().nodeUid().isPresent());
    }
    Set<String> running = clientThreads();
    assertTrue("task threads among " + running, running.stream().anyMatch(name -> name.startsWith("nodelet-kube-")));
    // the default transport: Jetty's client, on threads named after the client
    assertTrue("Jetty's I/O threads among " + running,
        running.stream().anyMatch(name -> name.matches("nodelet-kube-\\d+-http-\\d+")));

    Bundle kube = kubeBundle();
    kube.stop();
    try {
      assertEquals(Set.of(), kubeServices());
      // with http2.enabled=false, the JDK 17 HTTP client ends its selector thread only once the closed client is
      // garbage
      await().atMost(WAIT).untilAsserted(() -> {
        System.gc();
        assertEquals(Set.of(), clientThreads());
      });
    } finally {
      kube.start();
    }
  }

  /**
   * Replaces the configuration of {@code dev.nodelet.kube} with a valid one through Config Admin and waits until the
   * component has registered the client, reflectors and node identity of it. SCR shows the new properties before it
   * calls the component's modified method, so "active with these properties" alone would let a test find the
   * services of the previous configuration, about to be closed.
   */
  private void configureKube(Map<String, ?> values) throws Exception {
    long lastServiceBefore = lastServiceId();
    String generation = updateKubeConfiguration(values);
    await().atMost(WAIT).until(() -> activeWith(generation)
        && registeredAfter(lastServiceBefore).containsAll(List.of(KUBERNETES_CLIENT, Reflectors.class.getName(),
            NodeIdentity.class.getName())));
  }

  /**
   * Gives {@code dev.nodelet.kube} a configuration it must refuse and waits until SCR has taken it; nothing shows the
   * refusal itself, so a test that asserts on its effect follows it with a valid configuration (updates reach the
   * component in order).
   */
  private void offerRefusedKubeConfiguration(Map<String, ?> values) throws Exception {
    String generation = updateKubeConfiguration(values);
    await().atMost(WAIT).until(() -> activeWith(generation));
  }

  private String updateKubeConfiguration(Map<String, ?> values) throws IOException {
    String generation = UUID.randomUUID().toString();
    Hashtable<String, Object> properties = new Hashtable<>(values);
    properties.put(GENERATION_PROPERTY, generation);
    try (Tracked<ConfigurationAdmin> configurationAdmin = track(ConfigurationAdmin.class, null)) {
      // "?" binds the configuration to whichever bundle asks for it: SCR on behalf of nodelet-kube
      configurationAdmin.await().getConfiguration(KUBE_PID, "?").update(properties);
    }
    return generation;
  }

  /** The highest service id in the framework: ids only grow, so a later registration has a higher one. */
  private long lastServiceId() throws InvalidSyntaxException {
    long last = 0;
    for (ServiceReference<?> reference : bundleContext.getAllServiceReferences(null, null)) {
      last = Math.max(last, (Long) reference.getProperty(Constants.SERVICE_ID));
    }
    return last;
  }

  /** The services that nodelet-kube has registered since the service with the given id. */
  private Set<String> registeredAfter(long serviceId) {
    Set<String> names = new TreeSet<>();
    ServiceReference<?>[] references = kubeBundle().getRegisteredServices();
    for (ServiceReference<?> reference : references == null ? new ServiceReference<?>[0] : references) {
      if ((Long) reference.getProperty(Constants.SERVICE_ID) > serviceId) {
        names.addAll(List.of((String[]) reference.getProperty(Constants.OBJECTCLASS)));
      }
    }
    return names;
  }

  private boolean activeWith(String generation) {
    for (ComponentDescriptionDTO description : scr.getComponentDescriptionDTOs(kubeBundle())) {
      for (ComponentConfigurationDTO configuration : scr.getComponentConfigurationDTOs(description)) {
        if (configuration.state == ComponentConfigurationDTO.ACTIVE
            && generation.equals(configuration.properties.get(GENERATION_PROPERTY))) {
          return true;
        }
      }
    }
    return false;
  }

  private static Set<String> clientThreads() {
    Set<String> names = new TreeSet<>();
    for (Thread thread : Thread.getAllStackTraces().keySet()) {
      if (CLIENT_THREAD.matcher(thread.getName()).matches()) {
        names.add(thread.getName());
      }
    }
    return names;
  }
}
