package dev.nodelet.itests;

import static org.awaitility.Awaitility.await;
import static org.junit.Assert.assertFalse;

import java.net.URI;
import java.util.Dictionary;
import java.util.EnumSet;
import java.util.Hashtable;
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
import org.osgi.service.cm.ConfigurationAdmin;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link HealthScenario} in a real Karaf with {@code feature:install nodelet} (which brings {@code nodelet-health}
 * and Felix Health Checks), and the level of a Nodelet package changed at runtime through pax-logging's PID
 * {@code org.ops4j.pax.logging}, as Karaf users do.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
@ExamFactory(KarafTestContainerFactory.class)
public class KarafHealthIT extends NodeletTestSupport {

  private static final String LOGGING_PID = "org.ops4j.pax.logging";

  @Inject
  private FeaturesService featuresService;

  @Inject
  private ConfigurationAdmin configurationAdmin;

  @Configuration
  public Option[] configuration() {
    return karafOptions();
  }

  @Test
  public void healthReceiptsAndLogLevelsInKaraf() throws Exception {
    String version = System.getProperty(VERSION_PROPERTY);
    featuresService.addRepository(URI.create("mvn:dev.nodelet/nodelet-features/" + version + "/xml/features"));
    featuresService.installFeature("nodelet", EnumSet.of(FeaturesService.Option.NoAutoRefreshBundles));

    HealthScenario.run(bundleContext, configurationAdmin);

    Logger logger = LoggerFactory.getLogger("dev.nodelet.kube.internal.KubeComponent");
    assertFalse("INFO by default", logger.isDebugEnabled());
    org.osgi.service.cm.Configuration logging = configurationAdmin.getConfiguration(LOGGING_PID, null);
    Dictionary<String, Object> properties = logging.getProperties();
    Dictionary<String, Object> debug = new Hashtable<>();
    for (java.util.Enumeration<String> keys = properties.keys(); keys.hasMoreElements(); ) {
      String key = keys.nextElement();
      debug.put(key, properties.get(key));
    }
    debug.put("log4j2.logger.nodeletkube.name", "dev.nodelet.kube");
    debug.put("log4j2.logger.nodeletkube.level", "DEBUG");
    logging.update(debug);
    await().atMost(WAIT).until(logger::isDebugEnabled);
    // back as it was: the package logs at INFO again
    logging.update(properties);
    await().atMost(WAIT).until(() -> !logger.isDebugEnabled());
  }
}
