#include "attach_dialog.h"

#include <unistd.h>

#include <QDateTime>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <map>

#include "vramscope/trace/live.h"

namespace vramscope::app {
namespace {

constexpr int kSocketRole = Qt::UserRole + 1;

QString settingOf(const trace::FileHeader& h, const char* key) {
    for (const auto& [k, v] : h.captureSettings) {
        if (k == key) {
            return QString::fromStdString(v);
        }
    }
    return {};
}

}  // namespace

AttachDialog::AttachDialog(QWidget* parent) : QDialog(parent) {
    setWindowTitle(tr("Attach to Running Job"));
    auto* layout = new QVBoxLayout(this);
    auto* intro = new QLabel(
        tr("Your jobs running under vramscope-run (or vramscope-cli replay). Pick a rank, "
           "several, or a job's row for all its ranks. The jobs are not slowed or stopped."),
        this);
    intro->setWordWrap(true);
    layout->addWidget(intro);
    m_tree = new QTreeWidget(this);
    m_tree->setHeaderLabels(
        {tr("Job / rank"), tr("PID"), tr("Host"), tr("Started"), tr("GPUs"), tr("Command")});
    m_tree->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_tree->setRootIsDecorated(true);
    m_tree->header()->setStretchLastSection(true);
    layout->addWidget(m_tree, 1);
    m_status = new QLabel(this);
    m_status->setWordWrap(true);
    layout->addWidget(m_status);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("Attach"));
    QPushButton* again = buttons->addButton(tr("Refresh"), QDialogButtonBox::ActionRole);
    QPushButton* bySocket = buttons->addButton(tr("Socket File…"), QDialogButtonBox::ActionRole);
    connect(again, &QPushButton::clicked, this, &AttachDialog::refresh);
    connect(bySocket, &QPushButton::clicked, this, [this] {
        // A socket forwarded from another machine (ssh -L) into a directory of mode 0700.
        const QString path = QFileDialog::getOpenFileName(
            this, tr("A live socket"), QString::fromStdString(trace::live::socketDirectory()),
            tr("Live sockets (*.sock);;All files (*)"));
        if (!path.isEmpty()) {
            auto* item = new QTreeWidgetItem(m_tree, {path});
            item->setData(0, kSocketRole, path);
            m_tree->clearSelection();
            item->setSelected(true);
        }
    });
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_tree, &QTreeWidget::itemDoubleClicked, this, &QDialog::accept);
    layout->addWidget(buttons);
    resize(820, 420);
    refresh();
}

void AttachDialog::refresh() {
    m_tree->clear();
    const std::string dir = trace::live::socketDirectory();
    std::vector<std::string> removed;
    auto found = trace::live::listSockets(dir, true, &removed);
    if (!found.ok()) {
        m_status->setText(
            found.error().code == trace::ErrorCode::Io
                ? tr("No running job: %1 does not exist.").arg(QString::fromStdString(dir))
                : QString::fromStdString(found.error().describe()));
        return;
    }
    std::map<std::string, QTreeWidgetItem*> jobs;
    QStringList problems;
    int processes = 0;
    for (const auto& s : found.value()) {
        auto fd = trace::live::connectSocket(s.path);
        if (!fd.ok()) {
            problems << QString::fromStdString(fd.error().describe());
            continue;
        }
        auto hello = trace::live::readHello(fd.value(), s.path, 1000);
        ::close(fd.value());
        if (!hello.ok()) {
            problems << QString::fromStdString(hello.error().describe());
            continue;
        }
        const trace::FileHeader& h = hello.value();
        QTreeWidgetItem*& job = jobs[h.jobId];
        if (job == nullptr) {
            job = new QTreeWidgetItem(
                m_tree, {h.jobId.empty() ? tr("(no job id)") : QString::fromStdString(h.jobId)});
            job->setFirstColumnSpanned(false);
        }
        QStringList gpus;
        for (const auto& d : h.devices) {
            gpus << QStringLiteral("%1 %2")
                        .arg(static_cast<int32_t>(d.index))
                        .arg(QString::fromStdString(d.name))
                        .trimmed();
        }
        const QString started =
            h.wallClockAnchorNs > 0
                ? QDateTime::fromMSecsSinceEpoch(h.wallClockAnchorNs / 1'000'000)
                      .toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"))
                : QStringLiteral("–");
        const QString rank = h.rank != trace::kUnknownRank
                                 ? tr("rank %1").arg(static_cast<int32_t>(h.rank))
                                 : tr("rank ?");
        const QString command = settingOf(h, "command");
        auto* item = new QTreeWidgetItem(
            job, {rank, QString::number(h.pid), QString::fromStdString(h.host), started,
                  gpus.join(QStringLiteral(", ")),
                  command.isEmpty() ? QString::fromStdString(h.producer) : command});
        item->setData(0, kSocketRole, QString::fromStdString(s.path));
        item->setToolTip(0, QString::fromStdString(s.path));
        ++processes;
    }
    m_tree->expandAll();
    for (int c = 0; c < m_tree->columnCount() - 1; ++c) {
        m_tree->resizeColumnToContents(c);
    }
    if (m_tree->topLevelItemCount() > 0) {
        m_tree->topLevelItem(0)->setSelected(true);
    }
    QString status =
        processes == 0
            ? tr("No running job in %1.").arg(QString::fromStdString(dir))
            : tr("%n process(es) in %1.", "", processes).arg(QString::fromStdString(dir));
    if (!removed.empty()) {
        status +=
            tr(" Removed %n stale socket(s) of processes that are gone.", "", int(removed.size()));
    }
    if (!problems.isEmpty()) {
        status += QLatin1Char('\n') + problems.join(QLatin1Char('\n'));
    }
    m_status->setText(status);
    setProperty("processes", processes);
}

int AttachDialog::processCount() const {
    return property("processes").toInt();
}

QStringList AttachDialog::selectedSockets() const {
    QStringList sockets;
    auto add = [&](const QTreeWidgetItem* item) {
        const QString s = item->data(0, kSocketRole).toString();
        if (!s.isEmpty() && !sockets.contains(s)) {
            sockets << s;
        }
    };
    for (const QTreeWidgetItem* item : m_tree->selectedItems()) {
        add(item);
        for (int i = 0; i < item->childCount(); ++i) {
            add(item->child(i));  // a job's row: all its ranks
        }
    }
    return sockets;
}

}  // namespace vramscope::app
