package dev.nodelet.itests;

import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.ExamFactory;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.forked.ForkedTestContainerFactory;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.service.cm.ConfigurationAdmin;

/** {@link HealthScenario} in Felix: all of Nodelet from the {@code nodelet} feature's bundles. */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
@ExamFactory(ForkedTestContainerFactory.class)
public class FelixHealthIT extends NodeletTestSupport {

  @Configuration
  public Option[] configuration() {
    return felixOptions();
  }

  @Test
  public void healthAndReceiptsFollowTheApiServer() throws Exception {
    try (Tracked<ConfigurationAdmin> admin = track(ConfigurationAdmin.class, null)) {
      HealthScenario.run(bundleContext, admin.await());
    }
  }
}
