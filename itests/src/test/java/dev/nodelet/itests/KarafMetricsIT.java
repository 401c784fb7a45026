package dev.nodelet.itests;

import static dev.nodelet.itests.MetricsScrape.hasSamples;
import static dev.nodelet.itests.MetricsScrape.text;
import static dev.nodelet.itests.MetricsScrape.value;
import static org.awaitility.Awaitility.await;
import static org.junit.Assert.assertTrue;
import static org.ops4j.pax.exam.CoreOptions.systemProperty;
import static org.ops4j.pax.exam.karaf.options.KarafDistributionOption.editConfigurationFilePut;

import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import javax.inject.Inject;
import org.apache.karaf.features.FeaturesService;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.ExamFactory;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.karaf.container.internal.KarafTestContainerFactory;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;

/**
 * The feature {@code nodelet-metrics} in a real Karaf next to {@code nodelet-dra}: the endpoint on the port of
 * {@code etc/dev.nodelet.metrics.cfg} serves the client's and the controller's families, and the example driver
 * dropped into {@code deploy/} brings its metrics, which go when the jar is removed.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
@ExamFactory(KarafTestContainerFactory.class)
public class KarafMetricsIT extends NodeletTestSupport {

  private static final String PORT_PROPERTY = "nodelet.itest.metrics.port";
  private static final String DRIVER = "metrics.itest.nodelet.dev";

  @Inject
  private FeaturesService featuresService;

  @Configuration
  public Option[] configuration() throws Exception {
    int port;
    try (ServerSocket socket = new ServerSocket(0)) {
      port = socket.getLocalPort();
    }
    List<Option> options = new ArrayList<>(List.of(karafOptions()));
    options.add(editConfigurationFilePut("etc/dev.nodelet.metrics.cfg", "port", String.valueOf(port)));
    options.add(systemProperty(PORT_PROPERTY).value(String.valueOf(port)));
    String driverCfg = "etc/dev.nodelet.driver.example-metrics.cfg";
    options.add(editConfigurationFilePut(driverCfg, "driver.name", DRIVER));
    options.add(editConfigurationFilePut(driverCfg, "device.count", "3"));
    return options.toArray(Option[]::new);
  }

  @Test
  public void theEndpointServesEveryInstalledBundleAndAHotDeployedDriverComesAndGoes() throws Exception {
    int port = Integer.getInteger(PORT_PROPERTY);
    String version = System.getProperty(VERSION_PROPERTY);
    featuresService.addRepository(URI.create("mvn:dev.nodelet/nodelet-features/" + version + "/xml/features"));
    featuresService.installFeature("nodelet-metrics", EnumSet.of(FeaturesService.Option.NoAutoRefreshBundles));
    featuresService.installFeature("nodelet-dra", EnumSet.of(FeaturesService.Option.NoAutoRefreshBundles));

    await().atMost(WAIT).ignoreException(UncheckedIOException.class)
        .until(() -> hasSamples(text(port), "rest_client_requests"));
    String text = text(port);
    for (String family : List.of("rest_client_requests", "nodelet_apiserver_requests", "nodelet_dra_drivers",
        "nodelet_dra_slice_writes")) {
      assertTrue(family + " in\n" + text, hasSamples(text, family));
    }

    Path source = Path.of(System.getProperty(DRIVER_EXAMPLE_JAR_PROPERTY));
    Path deployed = Path.of(System.getProperty("karaf.base"), "deploy", "nodelet-driver-example.jar");
    Path staging = Files.createDirectories(Path.of(System.getProperty("karaf.data"), "itest-staging"));
    Path copy = staging.resolve(deployed.getFileName());
    Files.copy(source, copy, StandardCopyOption.REPLACE_EXISTING);
    Files.setLastModifiedTime(copy, FileTime.from(Instant.now()));
    Files.move(copy, deployed, StandardCopyOption.ATOMIC_MOVE);

    String devices = "nodelet_example_driver_devices{driver=\"" + DRIVER + "\"}";
    await().atMost(WAIT).until(() -> value(port, devices) == 3);
    await().atMost(WAIT).until(() -> value(port, "nodelet_dra_devices{driver=\"" + DRIVER + "\"}") == 3);

    Files.delete(deployed);
    await().atMost(WAIT).until(() -> Double.isNaN(value(port, devices)));
  }
}
