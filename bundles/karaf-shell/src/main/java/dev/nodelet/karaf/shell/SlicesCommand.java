package dev.nodelet.karaf.shell;

import dev.nodelet.dra.DraStatus;
import dev.nodelet.shell.views.DraViews;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/** {@code nodelet:slices}: this node's ResourceSlices in the DRA node controller's informer cache. */
@Service
@Command(scope = "nodelet", name = "slices", description = "Lists this node's ResourceSlices with driver, pool, "
    + "generation and device count")
public class SlicesCommand extends DraStatusCommand {

  @Override
  String view(DraStatus status) {
    return DraViews.slices(status.slices());
  }
}
