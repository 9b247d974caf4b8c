#include <QApplication>
#include <QIcon>

#include "main_window.h"
#include "runtime/torch_runtime.h"
#include "theme.h"

int main(int argc, char** argv) {
  shotchain::runtime::relaunchWithPassiveOpenMp(argv);
  const shotchain::runtime::RuntimeInfo runtime = shotchain::runtime::initTorchRuntime();
  QApplication app(argc, argv);
  QApplication::setApplicationName(QStringLiteral("ShotChain Studio"));
  QApplication::setOrganizationName(QStringLiteral("ShotChain"));
  QApplication::setApplicationVersion(QStringLiteral(SHOTCHAIN_VERSION));
  QApplication::setWindowIcon(QIcon(QStringLiteral(":/shotchain/shotchain.svg")));
  shotchain::ui::applyDarkTheme(app);

  shotchain::ui::MainWindow window(QString::fromStdString(runtime.device));
  const QStringList args = QApplication::arguments();
  window.show();
  if (args.size() > 1)
    window.openFile(args.at(1));
  else
    window.offerUntitledRecovery();
  window.offerModelFolders();
  return QApplication::exec();
}
