package dev.nodelet.itests;

import static org.ops4j.pax.exam.CoreOptions.composite;
import static org.ops4j.pax.exam.CoreOptions.junitBundles;
import static org.ops4j.pax.exam.CoreOptions.maven;
import static org.ops4j.pax.exam.CoreOptions.mavenBundle;
import static org.ops4j.pax.exam.CoreOptions.systemProperty;
import static org.ops4j.pax.exam.CoreOptions.url;
import static org.ops4j.pax.exam.CoreOptions.vmOptions;
import static org.ops4j.pax.exam.karaf.options.KarafDistributionOption.configureConsole;
import static org.ops4j.pax.exam.karaf.options.KarafDistributionOption.editConfigurationFilePut;
import static org.ops4j.pax.exam.karaf.options.KarafDistributionOption.karafDistributionConfiguration;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import javax.inject.Inject;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.AfterClass;
import org.ops4j.pax.exam.Option;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.Filter;
import org.osgi.framework.FrameworkUtil;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceReference;
import org.osgi.util.tracker.ServiceTracker;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * What the Felix and Karaf tests share: the option lists (built in the test JVM) and the helpers the test methods
 * use inside the OSGi container. JUnit reflects on every method here before a Karaf test has installed anything,
 * so no signature may name a type that only the Nodelet features bring.
 */
public abstract class NodeletTestSupport {

  static final String NODE_NAME = "itest-node";
  static final String SEEDED_CONFIGMAP = "seeded-by-test-jvm";
  static final String SEEDED_KEY = "greeting";
  static final String SEEDED_VALUE = "hello from the test JVM";

  static final String KUBE_PID = "dev.nodelet.kube";
  static final String KUBE_BUNDLE = "nodelet-kube";
  static final String KUBERNETES_CLIENT = "io.fabric8.kubernetes.client.KubernetesClient";
  static final Duration WAIT = Duration.ofSeconds(30);

  /** System properties that carry the test JVM's facts into the container. */
  static final String API_SERVER_URL_PROPERTY = "nodelet.itest.apiserver.url";
  static final String NODE_UID_PROPERTY = "nodelet.itest.node.uid";
  static final String VERSION_PROPERTY = "nodelet.itest.version";
  static final String EXTERNAL_DRIVER_JAR_PROPERTY = "nodelet.itest.external.driver.jar";
  static final String DRIVER_EXAMPLE_JAR_PROPERTY = "nodelet.itest.driver.example.jar";

  @Inject
  protected BundleContext bundleContext;

  /** The embedded API server of the running test class; only set in the test JVM, where the options are built. */
  private static ApiServerFixture apiServer;

  private static ApiServerFixture startApiServer() {
    apiServer = ApiServerFixture.start();
    return apiServer;
  }

  /** The embedded API server that {@link #karafOptions()} started; only in the test JVM. */
  static ApiServerFixture apiServer() {
    return apiServer;
  }

  @AfterClass
  public static void stopApiServer() {
    if (apiServer != null) {
      apiServer.close();
      apiServer = null;
    }
  }

  // ---------------------------------------------------------------- options, built in the test JVM

  /** The filtered nodelet-itest.properties; only read in the test JVM. */
  static Properties build() {
    Properties properties = new Properties();
    try (InputStream in = NodeletTestSupport.class.getResourceAsStream("/nodelet-itest.properties")) {
      properties.load(in);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return properties;
  }

  private static Option[] facts(ApiServerFixture apiServer, Properties build) {
    return new Option[] {
        systemProperty(API_SERVER_URL_PROPERTY).value(apiServer.url()),
        systemProperty(NODE_UID_PROPERTY).value(apiServer.nodeUid()),
        systemProperty(VERSION_PROPERTY).value(build.getProperty("nodelet.version")),
        systemProperty(EXTERNAL_DRIVER_JAR_PROPERTY).value(build.getProperty("external.driver.jar")),
        systemProperty(DRIVER_EXAMPLE_JAR_PROPERTY).value(build.getProperty("driver.example.jar")),
    };
  }

  /**
   * The build's options for the JVM of a container (the client compiler only: a container lives seconds to a minute,
   * and its start is most of its CPU time).
   */
  private static Option testJvm(Properties build) {
    String options = build.getProperty("test.jvm.options", "").trim();
    return options.isEmpty() ? composite() : vmOptions(options.split("\\s+"));
  }

  /** Awaitility in the container; it needs Hamcrest 2. */
  private static Option[] awaitility(Properties build) {
    return new Option[] {
        mavenBundle("org.hamcrest", "hamcrest", build.getProperty("hamcrest.version")),
        mavenBundle("org.awaitility", "awaitility", build.getProperty("awaitility.version")),
    };
  }

  /**
   * Felix with Config Admin, Metatype, an SLF4J 2 provider and every bundle of the feature {@code nodelet}, read
   * from the features file this build produced: the Felix test proves that the feature's bundle list resolves.
   */
  static Option[] felixOptions() {
    return felixOptions(ApiServerFixture.start());
  }

  /** The same with an API server the test class started itself; it is stopped after the class as well. */
  static Option[] felixOptions(ApiServerFixture server) {
    return felixOptions(server, "info");
  }

  /**
   * The same with SLF4J's simple logger at {@code logLevel} ({@code trace}, {@code debug}, {@code info} ...) for every
   * logger; where it writes (System.err by default) other {@code org.slf4j.simpleLogger.*} properties may say.
   */
  static Option[] felixOptions(ApiServerFixture server, String logLevel) {
    apiServer = server;
    Properties build = build();
    List<Option> options = new ArrayList<>();
    options.add(junitBundles());
    options.addAll(List.of(facts(server, build)));
    options.addAll(List.of(awaitility(build)));
    options.add(testJvm(build));
    options.add(systemProperty("org.slf4j.simpleLogger.defaultLogLevel").value(logLevel));
    // Pax Exam's own logging API, without a backend, prints at DEBUG (SPI Fly logs every provider at INFO)
    options.add(systemProperty("org.ops4j.pax.logging.DefaultServiceLog.level").value("WARN"));
    options.add(mavenBundle("org.apache.felix", "org.apache.felix.configadmin",
        build.getProperty("felix.configadmin.version")).startLevel(2));
    options.add(mavenBundle("org.apache.felix", "org.apache.felix.log", build.getProperty("felix.log.version"))
        .startLevel(2));
    options.add(mavenBundle("org.apache.felix", "org.apache.felix.metatype",
        build.getProperty("felix.metatype.version")).startLevel(2));
    // Karaf's pax-logging provides the SLF4J 2 API; here slf4j-api and slf4j-simple do
    options.add(mavenBundle("org.slf4j", "slf4j-api", build.getProperty("slf4j.version")));
    options.add(mavenBundle("org.slf4j", "slf4j-simple", build.getProperty("slf4j.version")));
    featureBundles(featuresFile(build), "nodelet").forEach((location, runtime) ->
        // bundles with a start level in the feature (SCR, SPI Fly) must start before the libraries they serve
        options.add(url(location).startLevel(runtime ? 2 : 3)));
    return options.toArray(Option[]::new);
  }

  /**
   * Karaf from its distribution archive, resolving offline: this build's artifacts from the reactor repository,
   * everything else from the local repository. {@code dev.nodelet.kube} comes from {@code etc/}.
   */
  static Option[] karafOptions() {
    ApiServerFixture server = startApiServer();
    Properties build = build();
    String mvnCfg = "etc/org.ops4j.pax.url.mvn.cfg";
    String kubeCfg = "etc/" + KUBE_PID + ".cfg";
    List<Option> options = new ArrayList<>(List.of(
        karafDistributionConfiguration()
            .frameworkUrl(maven("org.apache.karaf", "apache-karaf").type("tar.gz")
                .version(build.getProperty("karaf.version")))
            .unpackDirectory(new File(build.getProperty("build.directory"), "karaf"))
            .useDeployFolder(false),
        configureConsole().ignoreLocalConsole().ignoreRemoteShell(),
        editConfigurationFilePut(mvnCfg, "org.ops4j.pax.url.mvn.repositories", ""),
        editConfigurationFilePut(mvnCfg, "org.ops4j.pax.url.mvn.offline", "true"),
        editConfigurationFilePut(mvnCfg, "org.ops4j.pax.url.mvn.localRepository",
            build.getProperty("local.repository")),
        editConfigurationFilePut(mvnCfg, "org.ops4j.pax.url.mvn.defaultRepositories",
            new File(build.getProperty("reactor.repository")).toURI() + "@id=reactor@snapshots,"
                + "${karaf.home.uri}${karaf.default.repository}@id=system.repository@snapshots"),
        editConfigurationFilePut(kubeCfg, "master.url", server.url()),
        editConfigurationFilePut(kubeCfg, "node.name", NODE_NAME)));
    options.addAll(List.of(facts(server, build)));
    options.addAll(List.of(awaitility(build)));
    options.add(testJvm(build));
    return options.toArray(Option[]::new);
  }

  /** The bundles of one more feature of this build's features file, for Felix. */
  static List<Option> featureOptions(String feature) {
    List<Option> options = new ArrayList<>();
    featureBundles(featuresFile(build()), feature).forEach((location, runtime) ->
        options.add(url(location).startLevel(runtime ? 2 : 3)));
    return options;
  }

  private static File featuresFile(Properties build) {
    String version = build.getProperty("nodelet.version");
    return new File(build.getProperty("reactor.repository"),
        "dev/nodelet/nodelet-features/" + version + "/nodelet-features-" + version + "-features.xml");
  }

  /**
   * The bundle locations of a feature and the features it depends on, in order, each mapped to whether the
   * feature gives it a start level (the runtime bundles).
   */
  static Map<String, Boolean> featureBundles(File featuresFile, String feature) {
    Map<String, Element> features = new LinkedHashMap<>();
    try {
      DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
      factory.setNamespaceAware(true);
      Document document = factory.newDocumentBuilder().parse(featuresFile);
      NodeList nodes = document.getDocumentElement().getElementsByTagNameNS("*", "feature");
      for (int i = 0; i < nodes.getLength(); i++) {
        Element element = (Element) nodes.item(i);
        if (element.hasAttribute("name")) {
          features.put(element.getAttribute("name"), element);
        }
      }
    } catch (Exception e) {
      throw new IllegalStateException("cannot read features file " + featuresFile, e);
    }
    Map<String, Boolean> bundles = new LinkedHashMap<>();
    collectBundles(features, feature, bundles);
    return bundles;
  }

  private static void collectBundles(Map<String, Element> features, String name, Map<String, Boolean> bundles) {
    Element feature = features.get(name);
    if (feature == null) {
      throw new IllegalStateException("no feature " + name + " in the features file");
    }
    NodeList children = feature.getChildNodes();
    for (int i = 0; i < children.getLength(); i++) {
      if (!(children.item(i) instanceof Element)) {
        continue;
      }
      Element child = (Element) children.item(i);
      if (child.getLocalName().equals("feature")) {
        collectBundles(features, child.getTextContent().trim(), bundles);
      } else if (child.getLocalName().equals("bundle")) {
        bundles.putIfAbsent(child.getTextContent().trim(), child.hasAttribute("start-level"));
      }
    }
  }

  // ---------------------------------------------------------------- helpers used inside the container

  protected Bundle kubeBundle() {
    for (Bundle bundle : bundleContext.getBundles()) {
      if (KUBE_BUNDLE.equals(bundle.getSymbolicName())) {
        return bundle;
      }
    }
    throw new AssertionError("bundle " + KUBE_BUNDLE + " is not installed");
  }

  /**
   * The services that the nodelet-kube bundle registers right now, apart from the ManagedService that SCR
   * registers in the bundle's name for its configuration PID.
   */
  protected Set<String> kubeServices() {
    Set<String> names = new TreeSet<>();
    ServiceReference<?>[] references = kubeBundle().getRegisteredServices();
    if (references != null) {
      for (ServiceReference<?> reference : references) {
        names.addAll(List.of((String[]) reference.getProperty("objectClass")));
      }
    }
    names.remove("org.osgi.service.cm.ManagedService");
    return names;
  }

  /** Tracks services of a type and an optional extra filter until closed. */
  protected <T> Tracked<T> track(Class<T> type, String filter) {
    String objectClass = "(objectClass=" + type.getName() + ")";
    try {
      Filter osgiFilter = FrameworkUtil.createFilter(filter == null ? objectClass
          : "(&" + objectClass + filter + ")");
      ServiceTracker<T, T> tracker = new ServiceTracker<>(bundleContext, osgiFilter, null);
      tracker.open();
      return new Tracked<>(tracker, osgiFilter.toString());
    } catch (InvalidSyntaxException e) {
      throw new IllegalArgumentException(e);
    }
  }

  /** A service tracker that waits for its service and is closed with try-with-resources. */
  protected static final class Tracked<T> implements AutoCloseable {
    private final ServiceTracker<T, T> tracker;
    private final String filter;

    private Tracked(ServiceTracker<T, T> tracker, String filter) {
      this.tracker = tracker;
      this.filter = filter;
    }

    public T await() {
      try {
        T service = tracker.waitForService(WAIT.toMillis());
        if (service == null) {
          throw new AssertionError("no service " + filter + " within " + WAIT);
        }
        return service;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted while waiting for " + filter, e);
      }
    }

    @Override
    public void close() {
      tracker.close();
    }
  }
}
